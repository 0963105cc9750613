from django.urls import path

from memory.api.me import views

urlpatterns = [
    path("me/memories", views.MeMemoryListView.as_view(), name="me-memories"),
    path("me/consents", views.MeConsentsView.as_view(), name="me-consents"),
    path("me/memories/<uuid:claim_id>", views.MeMemoryDetailView.as_view(), name="me-memory"),
    path(
        "me/memories/<uuid:claim_id>/correct",
        views.MeMemoryCorrectView.as_view(),
        name="me-memory-correct",
    ),
    path("deletions/<uuid:deletion_id>", views.DeletionDetailView.as_view(), name="deletion"),
]
