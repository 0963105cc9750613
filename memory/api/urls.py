from django.urls import include, path

urlpatterns = [
    path("", include("memory.api.ledger.urls")),
    path("", include("memory.api.claims.urls")),
    path("", include("memory.api.recall.urls")),
    path("", include("memory.api.receipts.urls")),
    path("", include("memory.api.me.urls")),
    path("", include("memory.api.platforms.urls")),
]
