"""One FilterSet for review items, shared by the console queues and the reviews API."""

from __future__ import annotations

from datetime import timedelta

import django_filters
from django.db.models import QuerySet
from django.utils import timezone

from reviews.models import ItemStatus, Queue, ReviewItem

AGE_CHOICES = (("1h", "older than 1 hour"), ("1d", "older than 1 day"), ("7d", "older than 7 days"))
_AGES = {"1h": timedelta(hours=1), "1d": timedelta(days=1), "7d": timedelta(days=7)}


class ReviewItemFilter(django_filters.FilterSet):
    queue = django_filters.ChoiceFilter(choices=Queue.choices)
    status = django_filters.ChoiceFilter(choices=ItemStatus.choices)
    subject = django_filters.CharFilter(field_name="subject_key")
    topic = django_filters.CharFilter(field_name="topic", lookup_expr="icontains")
    agent = django_filters.CharFilter(field_name="agent_label")
    reason = django_filters.CharFilter(method="filter_reason")
    older_than = django_filters.ChoiceFilter(choices=AGE_CHOICES, method="filter_age")

    class Meta:
        model = ReviewItem
        fields = ["queue", "status", "subject", "topic", "agent", "reason", "older_than"]

    def filter_reason(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(reason_codes__contains=[value]) if value else queryset

    def filter_age(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(created_at__lt=timezone.now() - _AGES[value])
