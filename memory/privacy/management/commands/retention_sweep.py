"""`manage.py retention_sweep [--tenant SLUG]`: one retention pass, synchronously."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.actors import Actor
from accounts.models import Tenant
from memory.privacy.services.deletion import deletion_run
from memory.privacy.services.retention import retention_sweep


class Command(BaseCommand):
    help = (
        "Forget the claims, events and recall traces past their tenant's retention period "
        "now, in this process: ask for their deletions, then run each deletion (erase, "
        "propagate, verify with probes). "
        "Prints each tenant's deletions with their status and whether their report is clean."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", help="slug of the only tenant to sweep")

    def handle(self, *args: Any, tenant: str | None, **options: Any) -> None:
        tenants = Tenant.objects.order_by("pk")
        if tenant is not None:
            tenants = tenants.filter(slug=tenant)
            if not tenants.exists():
                raise CommandError(f"no tenant {tenant!r}")
        actor = Actor.system("retention command")
        for each in tenants:
            sweep = retention_sweep(tenant=each, actor=actor)
            finished = [deletion_run(deletion_id=d.pk, worker=actor) for d in sweep.deletions]
            self.stdout.write(
                json.dumps(
                    {
                        "tenant": each.slug,
                        "deletions": [
                            {
                                "id": str(d.pk),
                                "status": done.status if done else "pending",
                                "clean": done.report.get("clean") if done else None,
                            }
                            for d, done in zip(sweep.deletions, finished, strict=True)
                        ],
                    }
                )
            )
