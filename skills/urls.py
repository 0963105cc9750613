from django.urls import path

from skills import version_views, views

app_name = "skills"
urlpatterns = [
    path("", views.index, name="index"),
    path("drafts/new/", views.draft_new, name="draft-new"),
    path("tools/retire/", views.retire_tool, name="retire-tool"),
    path("<slug:slug>/", views.detail, name="detail"),
    path("<slug:slug>/upload/", views.upload, name="upload"),
    path("<slug:slug>/rollback/", views.rollback, name="rollback"),
    path("<slug:slug>/history/", views.history, name="history"),
    path("<slug:slug>/diff/", views.diff, name="diff"),
    path("<slug:slug>/v<int:number>/", version_views.version_detail, name="version"),
    path(
        "<slug:slug>/v<int:number>/files/<path:path>",
        version_views.file_detail,
        name="file",
    ),
    path(
        "<slug:slug>/v<int:number>/download/<path:path>",
        version_views.file_download,
        name="file-download",
    ),
    path(
        "<slug:slug>/v<int:number>/<slug:action>/",
        version_views.version_action,
        name="action",
    ),
]
