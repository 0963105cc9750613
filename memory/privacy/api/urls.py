from django.urls import include, path

urlpatterns = [
    path("", include("memory.privacy.api.me.urls")),
]
