from django.urls import include, path

urlpatterns = [
    path("", include("memory.receipts.api.receipts.urls")),
    path("", include("memory.receipts.api.platforms.urls")),
]
