from django.urls import path

from reviews import views

app_name = "reviews"
urlpatterns = [
    path("", views.index, name="index"),
    path("<str:queue>/", views.queue_view, name="queue"),
    path("<str:queue>/bulk", views.bulk_view, name="bulk"),
    path("<str:queue>/undo", views.undo_view, name="undo"),
    path("<str:queue>/filters", views.filter_save, name="filter-save"),
    path("<str:queue>/filters/<int:filter_id>/delete", views.filter_delete, name="filter-delete"),
    path("<str:queue>/<int:item_id>/", views.item_view, name="item"),
    path("<str:queue>/<int:item_id>/claim", views.claim_view, name="claim"),
    path("<str:queue>/<int:item_id>/decide", views.decide_view, name="decide"),
]
