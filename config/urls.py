from csp.constants import SELF, UNSAFE_INLINE
from csp.decorators import csp_replace
from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerSplitView

from common import views as common_views
from common.schema_view import SchemaView
from config import views as console_views
from memory.privacy import urls as privacy_urls

api_v1 = [
    path("", include("reviews.api.urls")),
    path("", include("memory.claims.api.urls")),
    path("", include("memory.receipts.api.urls")),
    path("", include("memory.privacy.api.urls")),
    path("", include("skills.api.urls")),
]

console = (
    [
        path("", console_views.home, name="home"),
        path("dashboard/", console_views.dashboard, name="dashboard"),
    ],
    "console",
)

urlpatterns = [
    path("api/v1/", include(api_v1)),
    path("api/schema/", SchemaView.as_view(), name="schema"),
    # The split view loads its start-up script from a URL instead of inline, so
    # Swagger UI runs under the console's strict policy unchanged.
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(url_name="schema", template_name="api/swagger_ui.html"),
        name="api-docs",
    ),
    # Redoc styles itself by injecting <style> elements and parses the schema in
    # a blob: worker; this page alone allows that. Scripts stay 'self' only.
    path(
        "api/redoc/",
        csp_replace({"style-src": [SELF, UNSAFE_INLINE], "worker-src": [SELF, "blob:"]})(
            SpectacularRedocView.as_view(url_name="schema", template_name="api/redoc.html")
        ),
        name="api-redoc",
    ),
    # Every other /api/ path answers a 404 problem here rather than through
    # handler404, which Django skips (for its HTML debug page) when DEBUG is on.
    re_path(r"^api/", common_views.api_not_found),
    path("healthz", common_views.healthz, name="healthz"),
    path("favicon.ico", console_views.favicon, name="favicon"),
    path("metrics", common_views.metrics, name="metrics"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
    path("review/", include("reviews.urls")),
    path("me/", include(privacy_urls.me_urls)),
    path("memory/", include("memory.claims.urls")),
    path("skills/", include("skills.urls")),
    path("platforms/", include("memory.receipts.urls")),
    path("recovery/", include("memory.receipts.recovery_urls")),
    path("tokens/", include("accounts.urls")),
    path("settings/retention/", include(privacy_urls.retention_urls)),
    path("", include(console)),
]

handler403 = "common.views.api_forbidden"
handler404 = "common.views.api_not_found"
handler500 = "common.views.api_server_error"
