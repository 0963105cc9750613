from django.urls import path

from memory.claims import views

app_name = "desk"
urlpatterns = [
    path("traces/<uuid:trace_id>/", views.trace_view, name="trace"),
    path(
        "traces/<uuid:trace_id>/counterfactual",
        views.counterfactual_view,
        name="counterfactual",
    ),
    path("claims/<uuid:claim_id>/", views.claim_usage_view, name="claim"),
    path("claims/<uuid:claim_id>/archive", views.claim_archive_view, name="archive"),
    path("ledger/", views.ledger_view, name="ledger"),
]
