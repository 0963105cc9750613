"""Request parsers for the API that refuse what PostgreSQL or Python cannot hold.

PostgreSQL text and jsonb refuse NUL characters and lone UTF-16 surrogates,
`bigint` stops at 64 bits, and Python's JSON decoder and every recursive walk
over the result (serializers, the gate's screens) run out of stack on deep
nesting. Refusing these at the door with a `400` problem keeps each of them
from turning into a `500` somewhere deeper, whichever view the body reaches.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from django.conf import settings
from rest_framework import parsers

from common.problems import Problem

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

# NUL and the surrogate block: neither can be stored as PostgreSQL text.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _invalid(code: str, detail: str) -> Problem:
    return Problem(code, detail, title="Malformed JSON")


def _parse_int(text: str) -> int:
    # Python refuses integers over 4,300 digits with a ValueError, which the
    # decoder would pass on as is; the range check makes that case moot.
    if len(text.lstrip("-")) > 19:
        raise _invalid(
            "integer_out_of_range", "An integer in the body is outside the signed 64-bit range."
        )
    value = int(text)
    if not INT64_MIN <= value <= INT64_MAX:
        raise _invalid(
            "integer_out_of_range", "An integer in the body is outside the signed 64-bit range."
        )
    return value


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _invalid("number_out_of_range", "A number in the body is too large to represent.")
    return value


def _parse_constant(name: str) -> Any:
    raise _invalid("malformed_json", f"{name} is not a JSON value.")


def _check_string(text: str) -> None:
    found = _UNSTORABLE.search(text)
    if found is None:
        return
    if found.group() == "\x00":
        raise _invalid("nul_character", "A string in the body contains a NUL character (\\u0000).")
    raise _invalid(
        "lone_surrogate",
        "A string in the body contains a lone UTF-16 surrogate; send valid Unicode.",
    )


def check_json_value(value: Any, *, max_depth: int) -> None:
    """Refuse NULs and lone surrogates in any string or key, and nesting beyond `max_depth`.

    Iterative, so the check itself cannot run out of stack.
    """
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            _check_string(item)
            continue
        if not isinstance(item, dict | list):
            continue
        if depth > max_depth:
            raise _invalid(
                "nesting_too_deep",
                f"The body nests objects and arrays deeper than {max_depth} levels.",
            )
        if isinstance(item, dict):
            for key, child in item.items():
                _check_string(key)
                stack.append((child, depth + 1))
        else:
            stack.extend((child, depth + 1) for child in item)


def loads(text: str, *, max_depth: int | None = None) -> Any:
    """Decode API JSON with the same refusals as the parser (for JSON carried in form fields)."""
    if max_depth is None:
        max_depth = settings.API_JSON_MAX_DEPTH
    try:
        value = json.loads(
            text, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_parse_constant
        )
    except RecursionError as exc:
        raise _invalid(
            "nesting_too_deep", f"The body nests objects and arrays deeper than {max_depth} levels."
        ) from exc
    except ValueError as exc:
        raise _invalid("malformed_json", f"The body is not valid JSON: {exc}") from exc
    check_json_value(value, max_depth=max_depth)
    return value


class SafeJSONParser(parsers.JSONParser):
    """DRF's JSON parser plus the refusals above; each has its own stable `code`."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        limit = settings.API_MAX_BODY_BYTES
        raw = stream.read(limit + 1)
        if len(raw) > limit:
            raise payload_too_large(limit=limit)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _invalid("malformed_json", "The body is not UTF-8 encoded JSON.") from exc
        return loads(text)


class LimitedMultiPartParser(parsers.MultiPartParser):
    """Multipart uploads (skill packages) up to `API_MAX_UPLOAD_BYTES`, refused before reading."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        request = (parser_context or {}).get("request")
        meta = request.META if request is not None else {}
        try:
            length = int(meta.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > settings.API_MAX_UPLOAD_BYTES:
            raise payload_too_large(limit=settings.API_MAX_UPLOAD_BYTES, size=length)
        return super().parse(stream, media_type, parser_context)


def payload_too_large(*, limit: int, size: int | None = None) -> Problem:
    said = f"The body is {size} bytes; " if size else "The body is too large; "
    return Problem(
        "payload_too_large",
        f"{said}this endpoint accepts at most {limit} bytes.",
        status_code=413,
        title="Payload too large",
        limit=limit,
    )
