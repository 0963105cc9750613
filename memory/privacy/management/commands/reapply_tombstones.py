"""`manage.py reapply_tombstones [--tenant SLUG]`: erase again what deletions erased."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.actors import Actor
from accounts.models import Tenant
from memory.privacy.services.tombstones import tombstones_reapply


class Command(BaseCommand):
    help = (
        "Run after restoring a database backup taken before some deletions. Restore the data "
        "tables but keep memory_tombstone and memory_deletionrequest as they are (they hold "
        "ids and digests only, never content); this command then erases, redacts and "
        "invalidates every tombstoned row again and purges the affected hot-memory caches. "
        "Idempotent. Prints what changed per tenant."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", help="slug of the only tenant to re-apply")

    def handle(self, *args: Any, tenant: str | None, **options: Any) -> None:
        tenants = Tenant.objects.order_by("pk")
        if tenant is not None:
            tenants = tenants.filter(slug=tenant)
            if not tenants.exists():
                raise CommandError(f"no tenant {tenant!r}")
        operator = Actor.system("reapply_tombstones command")
        for each in tenants:
            result = tombstones_reapply(tenant=each, actor=operator)
            self.stdout.write(
                json.dumps(
                    {
                        "tenant": each.slug,
                        "changed": result.changed,
                        **result.counts,
                        "hot_memory_keys_purged": result.hot_memory_keys_purged,
                    },
                    sort_keys=True,
                )
            )
