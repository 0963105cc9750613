from django.urls import path

from memory import views

app_name = "memory"
urlpatterns = [
    path("", views.me, name="me"),
    path("consents", views.consent_update, name="consent"),
    path("delete-everything", views.delete_everything, name="delete-everything"),
    path("memories/<uuid:claim_id>/", views.memory_detail, name="memory"),
    path("memories/<uuid:claim_id>/correct", views.memory_correct_view, name="correct"),
    path("memories/<uuid:claim_id>/delete", views.memory_delete, name="delete"),
    path("deletions/<uuid:deletion_id>/", views.deletion_view, name="deletion"),
    path("events/<uuid:event_id>/", views.event_view, name="event"),
    path("export", views.export_start, name="export"),
    path("exports/<uuid:export_id>/", views.export_view, name="export-progress"),
    path("exports/<uuid:export_id>/download", views.export_file, name="export-download"),
]
