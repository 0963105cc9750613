"""Serializer fields that take a JSON value only in the type the schema names.

DRF's fields were made for form input too, where every value is a string, so
they coerce: `UUIDField` reads an integer as `UUID(int=...)` (and `false`, a
Python int, as the zero UUID), `BooleanField` reads `"yes"` or `1` as true, and
`CharField` reads `42` as `"42"`. The API takes JSON only, where a client that
sends another type has a bug that coercion would store; these refuse it with
the usual `validation_error`. Strings are refused numbers everywhere (every
`CharField` in every serializer, see `refuse_numbers_for_strings`), since a
query string's values are strings already; booleans and UUIDs only in the JSON
bodies that declare the strict fields, since a query's `?x=true` is text.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

_lenient_char_to_internal = serializers.CharField.to_internal_value


class StrictUUIDField(serializers.UUIDField):
    """A UUID sent as a JSON string; any other JSON type is refused."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str):
            self.fail("invalid", value=data)
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """`true` or `false`; strings and numbers are refused."""

    default_error_messages = {"invalid": "Must be true or false."}

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


def _char_to_internal(self: serializers.CharField, data: Any) -> str:
    if not isinstance(data, str):
        self.fail("invalid")
    return _lenient_char_to_internal(self, data)


def refuse_numbers_for_strings() -> None:
    """Make every DRF `CharField` (and its subclasses) refuse a JSON number.

    Patched once at startup, rather than a field class of our own in every
    serializer, so no string field in any app can be left lenient.
    """
    serializers.CharField.to_internal_value = _char_to_internal  # type: ignore[method-assign, assignment]
