"""`manage.py consolidate [--tenant SLUG]`: one consolidation pass, synchronously."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.models import Tenant
from memory.privacy.models import ConsolidationTrigger
from memory.privacy.services.consolidation import consolidation_run_all


class Command(BaseCommand):
    help = (
        "Consolidate memory now, in this process: re-apply drifted tombstones, expire claims, "
        "merge duplicate candidates, turn hidden contradictions into conflicts, settle "
        "conflicts between verified sources by authority and observation time, invalidate "
        "claims derived from changed sources, flag stale claims still in demand, and rebuild "
        "the hot memory of every subject that changed. Idempotent: a second pass changes "
        "nothing. Prints what each tenant's pass changed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", help="slug of the only tenant to consolidate")

    def handle(self, *args: Any, tenant: str | None, **options: Any) -> None:
        tenants = Tenant.objects.order_by("pk")
        if tenant is not None:
            tenants = tenants.filter(slug=tenant)
            if not tenants.exists():
                raise CommandError(f"no tenant {tenant!r}")
        for run in consolidation_run_all(trigger=ConsolidationTrigger.COMMAND, tenants=tenants):
            self.stdout.write(
                json.dumps(
                    {
                        "tenant": run.tenant.slug,
                        "changed": run.changed,
                        **run.changes["counts"],
                        "hot_memory": run.changes["hot_memory"],
                    },
                    sort_keys=True,
                )
            )
