from django.urls import include, path

urlpatterns = [
    path("", include("memory.claims.api.ledger.urls")),
    path("", include("memory.claims.api.claims.urls")),
    path("", include("memory.claims.api.recall.urls")),
]
