"""Read-only admin pages: skills change only through skills.services."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from skills.models import EvaluationRun, LabelMove, Skill, SkillLabel, SkillPin, SkillVersion


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Skill)
class SkillAdmin(ReadOnlyAdmin):
    list_display = ("slug", "name", "tenant", "created_by_label", "created_at")
    list_filter = ("tenant",)
    search_fields = ("slug", "name")


@admin.register(SkillVersion)
class SkillVersionAdmin(ReadOnlyAdmin):
    list_display = ("skill", "number", "status", "content_hash", "author_label", "created_at")
    list_filter = ("status", "tenant")
    search_fields = ("skill__slug", "content_hash")
    exclude = ("body",)


@admin.register(EvaluationRun)
class EvaluationRunAdmin(ReadOnlyAdmin):
    list_display = ("version", "category", "passed", "content_hash", "actor_label", "at")
    list_filter = ("category", "passed")


@admin.register(SkillLabel)
class SkillLabelAdmin(ReadOnlyAdmin):
    list_display = ("skill", "name", "version", "moved_at")


@admin.register(LabelMove)
class LabelMoveAdmin(ReadOnlyAdmin):
    list_display = ("skill", "label", "from_version", "to_version", "cause", "actor_label", "at")
    list_filter = ("cause",)


@admin.register(SkillPin)
class SkillPinAdmin(ReadOnlyAdmin):
    list_display = ("instance", "version", "first_seen_at", "last_seen_at")
