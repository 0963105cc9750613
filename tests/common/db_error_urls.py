"""The project's URLs plus one API view that trips a real unique violation with what it is sent.

It stands in for any code path where a database error escapes with request
content in its message, so the log redaction is tested end to end.
"""

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


urlpatterns = [
    path("api/v1/_test/duplicate-tenant", DuplicateTenantView.as_view()),
    *project_urlpatterns,
]
