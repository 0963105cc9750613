"""Reads of registered platforms. Every one takes the tenant: forgetting it is a TypeError."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import QuerySet

from accounts.models import Tenant
from memory.receipts.models.platforms import OperationPolicy, Platform
from memory.receipts.reconcilers.urls import PlatformURL, URLRefused, parse_platform_url


def platforms_list(*, tenant: Tenant) -> QuerySet[Platform]:
    return Platform.objects.filter(tenant=tenant).order_by("name")


def platform_get(*, tenant: Tenant, name: str) -> Platform | None:
    return Platform.objects.filter(tenant=tenant, name=name).first()


def platform_for_url(*, tenant: Tenant, url: PlatformURL) -> Platform | None:
    """The tenant's platform whose base URL contains `url`; the most specific base wins."""
    matches: list[tuple[int, Platform]] = []
    for platform in platforms_list(tenant=tenant):
        try:
            base = parse_platform_url(platform.base_url)
        except URLRefused:
            continue
        if url.is_under(base):
            matches.append((len(base.path), platform))
    if not matches:
        return None
    return max(matches, key=lambda match: match[0])[1]


def operation_policies_list(*, tenant: Tenant) -> QuerySet[OperationPolicy]:
    return (
        OperationPolicy.objects.filter(tenant=tenant)
        .select_related("platform")
        .order_by("platform__name", "operation")
    )


def operation_policy_for(*, tenant: Tenant, operation: str) -> OperationPolicy | None:
    return OperationPolicy.objects.filter(tenant=tenant, operation=operation).first()


def operations_compensated_on_failure(*, tenant: Tenant, operations: Iterable[str]) -> set[str]:
    """Which of `operations` have a policy saying a failed effect is compensated."""
    return set(
        OperationPolicy.objects.filter(
            tenant=tenant, operation__in=list(operations), compensate_on_failure=True
        ).values_list("operation", flat=True)
    )
