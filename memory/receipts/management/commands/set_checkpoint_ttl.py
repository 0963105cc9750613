"""`manage.py set_checkpoint_ttl --tenant T --seconds N`."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.actors import Actor
from accounts.management.commands._lookup import tenant_by_slug
from common.problems import Problem
from memory.receipts.services.checkpoints import checkpoint_ttl_set


class Command(BaseCommand):
    help = (
        "Set how long a tenant's checkpoints live when the agent saves one without "
        "`expires_at`. Checkpoints already saved keep their expiry."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--seconds", required=True, type=int)

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_by_slug(options["tenant"])
        try:
            defaults = checkpoint_ttl_set(
                tenant=tenant,
                actor=Actor.system("manage.py set_checkpoint_ttl"),
                ttl_seconds=options["seconds"],
            )
        except Problem as problem:
            raise CommandError(f"{problem.code}: {problem.detail}") from None
        self.stdout.write(
            f"checkpoints of {tenant.slug} saved without an expiry now live "
            f"{defaults.ttl_seconds} s"
        )
