from django.urls import path

from memory import retention_views

app_name = "retention"
urlpatterns = [
    path("", retention_views.retention_settings, name="settings"),
    path("<int:policy_id>/remove", retention_views.retention_remove, name="remove"),
]
