from django.urls import path

from memory.claims.api.ledger import views

urlpatterns = [
    path("events/search", views.LedgerSearchView.as_view(), name="events-search"),
]
