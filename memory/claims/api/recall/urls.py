from django.urls import path

from memory.claims.api.recall import views

urlpatterns = [
    path("recall/traces/<uuid:trace_id>", views.RecallTraceView.as_view(), name="recall-trace"),
    path(
        "recall/traces/<uuid:trace_id>/used",
        views.RecallTraceUsedView.as_view(),
        name="recall-trace-used",
    ),
    path(
        "recall/traces/<uuid:trace_id>/counterfactual",
        views.RecallCounterfactualView.as_view(),
        name="recall-trace-counterfactual",
    ),
]
