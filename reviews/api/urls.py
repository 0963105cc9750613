from django.urls import path

from reviews.api import views

urlpatterns = [
    path("reviews", views.ReviewListView.as_view(), name="review-list"),
    path("reviews/queues", views.ReviewQueuesView.as_view(), name="review-queues"),
    path("reviews/<int:item_id>/claim", views.ReviewClaimView.as_view(), name="review-claim"),
    path("reviews/<int:item_id>/decide", views.ReviewDecideView.as_view(), name="review-decide"),
    path(
        "reviews/decisions/<int:decision_id>/undo",
        views.DecisionUndoView.as_view(),
        name="review-decision-undo",
    ),
]
