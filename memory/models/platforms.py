"""The outside systems an admin allowed memdesk to read from, per tenant.

Agents never choose which hosts memdesk contacts: a receipt's lookup must
fall under a registered platform's base URL, and the platform decides
whether private networks may be read at all.
"""

from __future__ import annotations

from django.db import models
from django.db.models.functions import Now

from accounts.models import ActorKind, Tenant

PLATFORM_NAME_PATTERN = r"^[a-z0-9](?:[a-z0-9._-]{0,62})$"


class Platform(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=64)
    # Normalised (see memory.reconcilers.urls): lower-case host, no default
    # port, a path ending in `/`, so prefix matching compares like with like.
    base_url = models.CharField(max_length=1000)
    # Loopback, private, link-local and other internal addresses may be read
    # only for a platform registered with this set.
    allow_private = models.BooleanField(default=False)
    created_by_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    created_by_id = models.CharField(max_length=64, blank=True)
    created_by_label = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "name"], name="platform_name_unique"),
            models.CheckConstraint(
                condition=models.Q(name__regex=PLATFORM_NAME_PATTERN), name="platform_name_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(base_url__regex=r"^https?://[^/@\s]+/(.*/)?$"),
                name="platform_base_url_normalised",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.base_url})"
