"""Cursor pagination as the API contract wants it: `{"results", "next"}`, `?limit=` ≤ 500."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.db import connection
from django.db.models import QuerySet
from rest_framework.exceptions import NotFound
from rest_framework.pagination import Cursor, CursorPagination
from rest_framework.request import Request
from rest_framework.response import Response

from common.problems import Problem


def cursor_invalid() -> Problem:
    return Problem(
        "cursor_invalid",
        "The cursor is not one this list handed out. Start again without `cursor`, "
        "then follow `next`.",
        title="Invalid cursor",
    )


class CursorPage(CursorPagination):
    page_size = 50
    page_size_query_param = "limit"
    max_page_size = 500
    ordering: str | list[str] | tuple[str, ...] = "-created_at"

    def get_page_size(self, request: Request) -> int:
        # DRF falls back to the default size on a `limit` it cannot read; the
        # schema says integer, so anything else is refused rather than ignored.
        raw = request.query_params.get(self.page_size_query_param or "limit")
        if raw is None:
            return self.page_size
        if not raw.isascii() or not raw.isdigit() or int(raw) < 1:
            raise Problem(
                "validation_error",
                "`limit` must be a whole number of at least 1.",
                title="Invalid request",
                errors={"limit": ["A whole number of at least 1."]},
            )
        return min(int(raw), self.max_page_size)

    def paginate_queryset(
        self, queryset: QuerySet, request: Request, view: Any = None
    ) -> list[Any] | None:
        self._model = queryset.model
        return super().paginate_queryset(queryset, request, view)

    def decode_cursor(self, request: Request) -> Cursor | None:
        # A cursor is opaque but only base64: an edited one must be a 400, not
        # a 404 (the list exists) and not a 500 from a position the ordering
        # field cannot hold.
        try:
            cursor = super().decode_cursor(request)
        except (NotFound, UnicodeError) as exc:
            raise cursor_invalid() from exc
        if cursor is not None and cursor.position is not None:
            # The stubs say int; DRF decodes the position from the query string as text.
            self._check_position(str(cursor.position))
        return cursor

    def _check_position(self, position: str) -> None:
        if "\x00" in position:
            raise cursor_invalid()
        name = self.ordering[0].lstrip("-")
        model = getattr(self, "_model", None)
        if model is None:
            return
        try:
            field = model._meta.get_field(name)
        except FieldDoesNotExist:
            return
        try:
            value = field.to_python(position)
            field.get_db_prep_value(value, connection=connection, prepared=False)
        except (ValidationError, ValueError, TypeError, OverflowError) as exc:
            raise cursor_invalid() from exc

    def get_paginated_response(self, data: Any) -> Response:
        return Response({"results": data, "next": self.get_next_link()})

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "object",
            "required": ["results", "next"],
            "properties": {
                "results": schema,
                "next": {"type": "string", "nullable": True, "format": "uri"},
            },
        }
