"""Named enums for the skills schema.

drf-spectacular names an inline enum after its field (``status``, ``state``),
and several apps have fields of those names with other choices, which it can
only resolve with hashed names and a warning (``check --deploy`` fails on it).
A ``NamedChoiceField`` states its component name instead, so the schema reads
``SkillVersionStatus`` and no other app's enum is affected.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from rest_framework import serializers


class NamedChoiceField(serializers.ChoiceField):
    """A ChoiceField documented as the schema component ``enum_name``."""

    def __init__(self, *, enum_name: str, **kwargs: Any) -> None:
        self.enum_name = enum_name
        super().__init__(**kwargs)


class NamedChoiceFieldExtension(OpenApiSerializerFieldExtension):
    target_class = NamedChoiceField

    def get_name(self) -> str:
        return self.target.enum_name

    def map_serializer_field(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        values = [value for value in self.target.choices if value not in ("", None)]
        return {"type": "string", "enum": values}
