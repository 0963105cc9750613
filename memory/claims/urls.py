from django.urls import path

from memory.claims import views as desk_views

app_name = "desk"
urlpatterns = [
    path("traces/<uuid:trace_id>/", desk_views.trace_view, name="trace"),
    path(
        "traces/<uuid:trace_id>/counterfactual",
        desk_views.counterfactual_view,
        name="counterfactual",
    ),
    path("claims/<uuid:claim_id>/", desk_views.claim_usage_view, name="claim"),
    path("claims/<uuid:claim_id>/archive", desk_views.claim_archive_view, name="archive"),
    path("ledger/", desk_views.ledger_view, name="ledger"),
]
