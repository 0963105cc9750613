from django.urls import path

from memory.claims.api.ledger import runs, views

urlpatterns = [
    path("events/search", views.LedgerSearchView.as_view(), name="events-search"),
    path("runs", runs.RunCreateView.as_view(), name="run-create"),
    path("runs/<uuid:run_pk>", runs.RunDetailView.as_view(), name="run-detail"),
]
