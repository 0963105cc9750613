"""The OpenAPI schema endpoint, generated once per process and throttled per address.

Generating the schema walks every view and serializer (about half a second),
and the endpoint is public; answering each request afresh let anyone spend
that time at will. The schema depends only on the code, the settings and the
requested version and language, so each process keeps what it generated and
forgets it when a setting it reads changes (tests override them).
"""

from __future__ import annotations

from typing import Any

from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils import translation
from drf_spectacular.views import SpectacularAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.throttles import SchemaThrottle

_SCHEMA_SETTINGS = {"SPECTACULAR_SETTINGS", "REST_FRAMEWORK", "ROOT_URLCONF"}
_schemas: dict[tuple[str | None, str | None], dict[str, Any]] = {}


@receiver(setting_changed)
def _forget_schemas(*, setting: str, **kwargs: Any) -> None:
    if setting in _SCHEMA_SETTINGS:
        _schemas.clear()


class SchemaView(SpectacularAPIView):
    throttle_classes = [*APIView.throttle_classes, SchemaThrottle]

    # drf-spectacular's own method builds a generator and a schema on every call.
    def _get_schema_response(self, request: Request) -> Response:
        version = self.api_version or request.version or self._get_version_parameter(request)
        key = (version, translation.get_language())
        schema = _schemas.get(key)
        if schema is None:
            generator = self.generator_class(
                urlconf=self.urlconf, api_version=version, patterns=self.patterns
            )
            schema = _schemas[key] = generator.get_schema(request=request, public=self.serve_public)
        filename = self._get_filename(request, version)
        return Response(
            data=schema, headers={"Content-Disposition": f'inline; filename="{filename}"'}
        )
