from django.urls import path

from memory.receipts.api.platforms import views

urlpatterns = [
    path("platforms", views.PlatformListCreateView.as_view(), name="platform-list"),
    path(
        "platforms/<str:name>/absence-proof",
        views.PlatformAbsenceProofView.as_view(),
        name="platform-absence-proof",
    ),
    path(
        "platforms/<str:name>/controls",
        views.PlatformControlsView.as_view(),
        name="platform-controls",
    ),
    path(
        "platforms/<str:name>/policies",
        views.OperationPolicyListSetView.as_view(),
        name="platform-policies",
    ),
]
