"""Skill governance metrics, read from PostgreSQL at scrape time."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Count
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily, Metric

from skills.models import SkillPin, SkillVersion, VersionStatus
from skills.selectors import PIN_WINDOW


def collect_skill_metrics() -> Iterable[Metric]:
    versions = GaugeMetricFamily(
        "memdesk_skill_versions", "Skill versions by lifecycle status.", labels=["status"]
    )
    counts = dict(SkillVersion.objects.order_by().values_list("status").annotate(n=Count("id")))
    for status in VersionStatus.values:
        versions.add_metric([status], counts.get(status, 0))
    yield versions

    # An instance still loading a deprecated version, or one that loaded a
    # version shortly before it was revoked, is what an operator chases.
    pins = GaugeMetricFamily(
        "memdesk_skill_instances_active",
        "Instances (X-Skill-Instance) that loaded a version in the last 24 h, by the "
        "version's status now.",
        labels=["status"],
    )
    since = timezone.now() - PIN_WINDOW
    active = dict(
        SkillPin.objects.filter(last_seen_at__gte=since)
        .order_by()
        .values_list("version__status")
        .annotate(n=Count("id"))
    )
    for status in (VersionStatus.PUBLISHED, VersionStatus.DEPRECATED, VersionStatus.REVOKED):
        pins.add_metric([status], active.get(status, 0))
    yield pins
