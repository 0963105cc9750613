from django.urls import path

from memory.receipts.api.receipts import recovery_answers, views

urlpatterns = [
    path("receipts", views.ReceiptListCreateView.as_view(), name="receipt-list"),
    path("receipts/<uuid:receipt_id>", views.ReceiptDetailView.as_view(), name="receipt-detail"),
    path(
        "receipts/<uuid:receipt_id>/transitions",
        views.ReceiptTransitionView.as_view(),
        name="receipt-transitions",
    ),
    path("checkpoints/<str:task_key>", views.CheckpointView.as_view(), name="checkpoint"),
    path("recovery", views.RecoveryView.as_view(), name="recovery"),
    path("recovery/release", views.RecoveryReleaseView.as_view(), name="recovery-release"),
    path(
        "recovery/answers",
        recovery_answers.RecoveryAnswerListView.as_view(),
        name="recovery-answer-list",
    ),
    path(
        "recovery/answers/<int:answer_id>/verdict",
        recovery_answers.RecoveryVerdictView.as_view(),
        name="recovery-answer-verdict",
    ),
]
