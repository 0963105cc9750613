from django.urls import path

from memory.claims.api.claims import archive, merge, views
from memory.claims.api.ledger import events
from memory.claims.api.recall import answers

urlpatterns = [
    path("events", events.EventCreateView.as_view(), name="event-create"),
    path("events/<uuid:event_id>", events.EventDetailView.as_view(), name="event-detail"),
    path("claims", views.ClaimListCreateView.as_view(), name="claim-list"),
    path("claims:batch", views.ClaimBatchView.as_view(), name="claim-batch"),
    path("claims/<uuid:claim_id>", views.ClaimDetailView.as_view(), name="claim-detail"),
    path(
        "claims/<uuid:claim_id>/invalidate",
        views.ClaimInvalidateView.as_view(),
        name="claim-invalidate",
    ),
    path("claims/<uuid:claim_id>/derive", views.ClaimDeriveView.as_view(), name="claim-derive"),
    path(
        "claims/<uuid:claim_id>/archive", archive.ClaimArchiveView.as_view(), name="claim-archive"
    ),
    path(
        "claims/<uuid:claim_id>/restore", archive.ClaimRestoreView.as_view(), name="claim-restore"
    ),
    path("claims/<uuid:claim_id>/merge", merge.ClaimMergeView.as_view(), name="claim-merge"),
    path("gate/rules", views.GateRulesView.as_view(), name="gate-rules"),
    path("recall", answers.RecallView.as_view(), name="recall"),
    path("subjects/<str:subject>/hot-memory", answers.HotMemoryView.as_view(), name="hot-memory"),
]
