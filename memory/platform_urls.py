from django.urls import path

from memory import platform_views

app_name = "platforms"
urlpatterns = [
    path("", platform_views.index, name="index"),
]
