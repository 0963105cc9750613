"""Reading a batch's items as their serializer would, without its per-item machinery.

A batch runs one serializer over up to 1,000 items. For each item DRF walks
every field through `get_value`, `validate_empty_values`, `run_validators`,
`set_value` and a nested serializer per source, and most of that time goes to
fields the item leaves out or fills with a plain choice. `ItemReader` reads an
item the same way with the serializer's own fields: each given value through
its field's `run_validation` (a choice by lookup), each missing one its
field's default, the sources through a reader of their own, then the
serializer's `validate`. Whatever it does not read the same way (a wrong type,
an invalid value, a missing required field) makes it answer None, and the
caller runs the serializer, which gives the data or the errors the API
promises: a reader can only be faster, never different.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.fields import SkipField

_Read = Callable[[Any], Any]


class _NotPlain(Exception):
    """The reader does not read this value as the serializer would: the serializer reads it."""


class ItemReader:
    """`serializer.run_validation(item)` for an item it reads as the serializer would."""

    def __init__(self, serializer: serializers.Serializer) -> None:
        self._serializer = serializer
        self._plain = not serializer.validators and all(
            getattr(serializer, f"validate_{name}", None) is None and field.source == name
            for name, field in serializer.fields.items()
        )
        # The fields DRF reads, in its order: the writable ones.
        self._fields: list[tuple[str, serializers.Field, _Read | None]] = [
            (name, field, _reader_of(field))
            for name, field in serializer.fields.items()
            if not field.read_only
        ]

    def read(self, item: Any) -> dict[str, Any] | None:
        """The validated data, or None when the serializer must read the item."""
        if not self._plain or type(item) is not dict:
            return None
        try:
            return self._read(item)
        except (_NotPlain, ValidationError, DjangoValidationError):
            return None

    def _read(self, item: dict[str, Any]) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for name, field, read in self._fields:
            if name not in item:
                if field.required:
                    raise _NotPlain
                try:
                    data[name] = field.get_default()
                except SkipField:
                    continue
                continue
            data[name] = read(item[name]) if read is not None else field.run_validation(item[name])
        return self._serializer.validate(data)


def _reader_of(field: serializers.Field) -> _Read | None:
    """A faster reading of `field` than its `run_validation`, if there is one."""
    if isinstance(field, serializers.ListSerializer):
        return _list_reader(field)
    if isinstance(field, serializers.BaseSerializer):
        return _refuse
    if type(field) is serializers.ChoiceField and not field.validators:
        choices = field.choice_strings_to_values

        def choice(value: Any) -> Any:
            if type(value) is not str or value not in choices:
                raise _NotPlain
            return choices[value]

        return choice
    return None


def _list_reader(field: serializers.ListSerializer) -> _Read:
    child = field.child
    if (
        not isinstance(child, serializers.Serializer)
        or field.validators
        or not field.allow_empty
        or getattr(field, "max_length", None) is not None
        or getattr(field, "min_length", None) is not None
    ):
        return _refuse
    reader = ItemReader(child)

    def many(value: Any) -> list[dict[str, Any]]:
        if type(value) is not list:
            raise _NotPlain
        items = []
        for item in value:
            read = reader.read(item)
            if read is None:
                raise _NotPlain
            items.append(read)
        return items

    return many


def _refuse(value: Any) -> Any:
    raise _NotPlain
