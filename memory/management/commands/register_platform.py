"""`manage.py register_platform --tenant T --name N --base-url URL [--allow-private]`."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.actors import Actor
from accounts.management.commands._lookup import tenant_by_slug
from common.problems import Problem
from memory.services.platforms import platform_register


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

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_by_slug(options["tenant"])
        try:
            platform, created = platform_register(
                tenant=tenant,
                actor=Actor.system("manage.py register_platform"),
                name=options["name"],
                base_url=options["base_url"],
                allow_private=options["allow_private"],
            )
        except Problem as problem:
            raise CommandError(f"{problem.code}: {problem.detail}") from None
        private = " (private networks allowed)" if platform.allow_private else ""
        verb = "registered" if created else "already registered"
        self.stdout.write(f"{verb} {platform.name} for {tenant.slug}: {platform.base_url}{private}")
