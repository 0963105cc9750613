from __future__ import annotations

import ipaddress
import secrets

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.module_loading import import_string
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET

from common.health import broker_ok, database_ok
from common.metrics import render_metrics
from common.problems import problem_response


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    db_ok, db_detail = database_ok()
    mq_ok, mq_detail = broker_ok()
    healthy = db_ok and mq_ok
    return JsonResponse(
        {
            "status": "ok" if healthy else "unavailable",
            "checks": {"database": db_detail, "broker": mq_detail},
            # How recall ranks by meaning: pgvector, python or off (never unhealthy).
            "semantic": import_string(settings.SEMANTIC_MODE_PROBE)() if db_ok else "off",
        },
        status=200 if healthy else 503,
    )


# Headers a reverse proxy adds: a request carrying one came from outside, even
# when the proxy itself connects from the loopback address.
_FORWARDING_HEADERS = ("Forwarded", "X-Forwarded-For", "X-Real-IP")


@never_cache
@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    """Prometheus text, for the scraper only: it names every tenant and its activity.

    With `METRICS_TOKEN` set, the scraper sends it as a bearer token; without
    one, only a direct loopback client is answered. Anyone else gets the same
    404 as any unknown path rather than a 401, which would confirm that the
    endpoint exists and invite guessing its token.
    """
    if not _may_scrape(request):
        return api_not_found(request)
    return HttpResponse(render_metrics(), content_type="text/plain; version=0.0.4; charset=utf-8")


def _may_scrape(request: HttpRequest) -> bool:
    expected = settings.METRICS_TOKEN
    if expected:
        scheme, _, given = request.headers.get("Authorization", "").partition(" ")
        # compare_digest takes as long for a wrong token as for a right one.
        return scheme.lower() == "bearer" and secrets.compare_digest(
            given.strip().encode(), expected.encode()
        )
    if any(header in request.headers for header in _FORWARDING_HEADERS):
        return False
    try:
        return ipaddress.ip_address(request.META.get("REMOTE_ADDR", "")).is_loopback
    except ValueError:
        return False


# It changes nothing, so there is no forgery to stop: a POST to an unknown path
# without a CSRF token is the same 404 problem, not Django's HTML 403 page.
@csrf_exempt
def api_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if request.path.startswith("/api/"):
        return problem_response(
            request,
            status_code=404,
            code="not_found",
            title="Not found",
            detail="No such resource.",
        )
    from django.views.defaults import page_not_found

    return page_not_found(request, exception or Exception("not found"))


def api_forbidden(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """A refused page: a problem for the API, the console's styled 403 page otherwise."""
    if request.path.startswith("/api/"):
        return problem_response(
            request,
            status_code=403,
            code="permission_denied",
            title="Permission denied",
            detail="You do not have permission to perform this action.",
        )
    from django.views.defaults import permission_denied

    return permission_denied(request, exception or Exception(""))


def api_server_error(request: HttpRequest) -> HttpResponse:
    if request.path.startswith("/api/"):
        return problem_response(
            request,
            status_code=500,
            code="internal_error",
            title="Internal error",
            detail="memdesk failed to answer; the error was logged. Retry later.",
        )
    from django.views.defaults import server_error

    return server_error(request)
