"""The privacy domain's console pages: the end user's /me/ (namespace `memory`) and the
admins' retention settings (namespace `retention`); config/urls.py mounts each."""

from django.urls import path

from memory.privacy.views import me, retention

me_urls = (
    [
        path("", me.me, name="me"),
        path("consents", me.consent_update, name="consent"),
        path("delete-everything", me.delete_everything, name="delete-everything"),
        path("memories/<uuid:claim_id>/", me.memory_detail, name="memory"),
        path("memories/<uuid:claim_id>/correct", me.memory_correct_view, name="correct"),
        path("memories/<uuid:claim_id>/delete", me.memory_delete, name="delete"),
        path("deletions/<uuid:deletion_id>/", me.deletion_view, name="deletion"),
        path("events/<uuid:event_id>/", me.event_view, name="event"),
        path("export", me.export_start, name="export"),
        path("exports/<uuid:export_id>/", me.export_view, name="export-progress"),
        path("exports/<uuid:export_id>/download", me.export_file, name="export-download"),
    ],
    "memory",
)

retention_urls = (
    [
        path("", retention.retention_settings, name="settings"),
        path("<int:policy_id>/remove", retention.retention_remove, name="remove"),
    ],
    "retention",
)
