"""`manage.py register_platform --tenant T --name N --base-url URL [--allow-private]
[--absence-proof P --lookup-template T --key-retention-seconds S]
[--consistency-delay-seconds S]`."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.actors import Actor
from accounts.management.commands._lookup import tenant_by_slug
from common.problems import Problem
from memory.receipts.models.platforms import AbsenceProof
from memory.receipts.services.platforms import platform_register


class Command(BaseCommand):
    help = (
        "Register a platform receipts may look their effects up on. memdesk resolves the "
        "host and refuses loopback, private, link-local, multicast and reserved addresses "
        "unless --allow-private is given. Registering the same platform again changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--name", required=True, help="lower-case, e.g. blog")
        parser.add_argument("--base-url", required=True, help="every lookup URL must start with it")
        parser.add_argument(
            "--allow-private",
            action="store_true",
            help="let lookups read internal addresses (only for platforms on your own network)",
        )
        parser.add_argument(
            "--absence-proof",
            choices=AbsenceProof.values,
            default=AbsenceProof.NONE,
            help="what a negative answer of the lookup proves (none: a person decides)",
        )
        parser.add_argument(
            "--lookup-template",
            default="",
            help="path and query under the base URL with {idempotency_key}",
        )
        parser.add_argument(
            "--key-retention-seconds",
            type=int,
            default=None,
            help="how long the platform remembers an idempotency key",
        )
        parser.add_argument(
            "--consistency-delay-seconds",
            type=int,
            default=0,
            help="how long after submission a negative answer is not yet trusted",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_by_slug(options["tenant"])
        try:
            platform, created = platform_register(
                tenant=tenant,
                actor=Actor.system("manage.py register_platform"),
                name=options["name"],
                base_url=options["base_url"],
                allow_private=options["allow_private"],
                absence_proof=options["absence_proof"],
                lookup_template=options["lookup_template"],
                key_retention_seconds=options["key_retention_seconds"],
                consistency_delay_seconds=options["consistency_delay_seconds"],
            )
        except Problem as problem:
            raise CommandError(f"{problem.code}: {problem.detail}") from None
        private = " (private networks allowed)" if platform.allow_private else ""
        verb = "registered" if created else "already registered"
        self.stdout.write(f"{verb} {platform.name} for {tenant.slug}: {platform.base_url}{private}")
