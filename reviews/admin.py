"""Read-only admin list of review items: they change only through reviews.services."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from reviews.models import ReviewItem


@admin.register(ReviewItem)
class ReviewItemAdmin(admin.ModelAdmin):
    # The console queue's columns, oldest first, a page of 50 like the console.
    list_display = (
        "id",
        "queue",
        "topic",
        "status",
        "subject_key",
        "reason_codes",
        "claimed_by",
        "created_at",
    )
    list_filter = ("queue", "status")
    ordering = ("created_at", "id")
    list_per_page = 50

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
