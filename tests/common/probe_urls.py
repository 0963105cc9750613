"""The project's URLs plus two probe views that stand in for code paths tests need to provoke.

- one trips a real unique violation with what it is sent, standing in for any
  path where a database error escapes with request content in its message;
- one holds its database connection for a moment, standing in for a slow
  request, so that concurrent load on connections can be measured.
"""

from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.urls import path
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import api_context
from accounts.models import Tenant
from config.urls import urlpatterns as project_urlpatterns


class DuplicateTenantView(APIView):
    def post(self, request: Request) -> Response:
        api_context(request)  # only authenticated callers get this far
        slug = str(request.data["slug"])
        Tenant.objects.create(slug=slug, name="first")
        Tenant.objects.create(slug=slug, name="second")
        return Response(status=201)


def slow_query(request: HttpRequest) -> JsonResponse:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_sleep(0.3), pg_backend_pid()")
        _, pid = cursor.fetchone()
    return JsonResponse({"pid": pid})


urlpatterns = [
    path("api/v1/_test/duplicate-tenant", DuplicateTenantView.as_view()),
    path("_test/slow-query", slow_query),
    *project_urlpatterns,
]
