from django.urls import path

from skills.api import instance_views as instances
from skills.api import lifecycle_views as lifecycle
from skills.api import loading_views as loading
from skills.api import views

_VERSION = "skills/<slug:slug>/versions/<int:number>"

urlpatterns = [
    path("skills", views.SkillListView.as_view(), name="skill-list"),
    path("skills/catalog", loading.CatalogView.as_view(), name="skill-catalog"),
    path("skills/drafts", views.DraftView.as_view(), name="skill-drafts"),
    path("skills/grants", instances.GrantListView.as_view(), name="skill-grants"),
    path("skills/grants/<int:pk>", instances.GrantDetailView.as_view(), name="skill-grant"),
    path("skills/load", instances.LoadView.as_view(), name="skill-load"),
    path(
        "skills/credentials/changed",
        instances.CredentialChangedView.as_view(),
        name="skill-credential-changed",
    ),
    path("skills/tools", loading.RetiredToolListView.as_view(), name="skill-tools-retired"),
    path(
        "skills/tools/<str:name>/retire",
        loading.RetireToolView.as_view(),
        name="skill-tool-retire",
    ),
    path("skills/<slug:slug>", views.SkillDetailView.as_view(), name="skill-detail"),
    path("skills/<slug:slug>/versions", views.VersionListView.as_view(), name="skill-version-list"),
    path(_VERSION, views.VersionDetailView.as_view(), name="skill-version-detail"),
    path(
        f"{_VERSION}/files/<path:path>", views.VersionFileView.as_view(), name="skill-version-file"
    ),
    path(
        f"{_VERSION}/evaluations",
        views.EvaluationListView.as_view(),
        name="skill-version-evaluations",
    ),
    path(f"{_VERSION}/body", loading.BodyView.as_view(), name="skill-version-body"),
    path(f"{_VERSION}/loads", loading.LoadListView.as_view(), name="skill-version-loads"),
    path(f"{_VERSION}/reports", instances.UseReportView.as_view(), name="skill-version-reports"),
    path(
        f"{_VERSION}/instantiate",
        loading.InstantiateView.as_view(),
        name="skill-version-instantiate",
    ),
    path(f"{_VERSION}/submit", lifecycle.SubmitView.as_view(), name="skill-version-submit"),
    path(f"{_VERSION}/approve", lifecycle.ApproveView.as_view(), name="skill-version-approve"),
    path(f"{_VERSION}/reject", lifecycle.RejectView.as_view(), name="skill-version-reject"),
    path(f"{_VERSION}/publish", lifecycle.PublishView.as_view(), name="skill-version-publish"),
    path(
        f"{_VERSION}/deprecate",
        lifecycle.DeprecateView.as_view(),
        name="skill-version-deprecate",
    ),
    path(f"{_VERSION}/revoke", lifecycle.RevokeView.as_view(), name="skill-version-revoke"),
    path(
        "skills/<slug:slug>/versions/<int:a>/diff/<int:b>",
        loading.DiffView.as_view(),
        name="skill-version-diff",
    ),
    path("skills/<slug:slug>/rollback", lifecycle.RollbackView.as_view(), name="skill-rollback"),
    path("skills/<slug:slug>/resolve", loading.ResolveView.as_view(), name="skill-resolve"),
    path(
        "skills/<slug:slug>/labels/<slug:label>/history",
        loading.LabelHistoryView.as_view(),
        name="skill-label-history",
    ),
]
