from django.urls import path

from memory.privacy.api.me import exports, views

urlpatterns = [
    path("me/memories", views.MeMemoryListView.as_view(), name="me-memories"),
    path("me/consents", views.MeConsentsView.as_view(), name="me-consents"),
    path("me/memories/<uuid:claim_id>", views.MeMemoryDetailView.as_view(), name="me-memory"),
    path(
        "me/memories/<uuid:claim_id>/correct",
        views.MeMemoryCorrectView.as_view(),
        name="me-memory-correct",
    ),
    path("me/export", exports.MeExportView.as_view(), name="me-export"),
    path("me/exports", exports.MeExportListView.as_view(), name="me-exports"),
    path("me/exports/<uuid:export_id>", exports.MeExportDetailView.as_view(), name="me-export-get"),
    path(
        "me/exports/<uuid:export_id>/download",
        exports.MeExportDownloadView.as_view(),
        name="me-export-download",
    ),
    path("deletions/<uuid:deletion_id>", views.DeletionDetailView.as_view(), name="deletion"),
]
