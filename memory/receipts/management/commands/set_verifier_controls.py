"""`manage.py set_verifier_controls --tenant T --platform P --known-absent-key K
[--known-present-key K]`."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.actors import Actor
from accounts.management.commands._lookup import tenant_by_slug
from common.problems import Problem
from memory.receipts.services.verifier_controls import platform_controls_set


class Command(BaseCommand):
    help = (
        "Give a registered platform's verifier its negative controls: a key it never saw and, "
        "optionally, a key it holds (docs/reconciliation.md, 'Verifier controls')."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--platform", required=True, help="a registered platform's name")
        parser.add_argument("--known-absent-key", required=True)
        parser.add_argument("--known-present-key", default="")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            platform = platform_controls_set(
                tenant=tenant_by_slug(options["tenant"]),
                actor=Actor.system("manage.py set_verifier_controls"),
                name=options["platform"],
                known_absent_key=options["known_absent_key"],
                known_present_key=options["known_present_key"],
            )
        except Problem as problem:
            raise CommandError(f"{problem.code}: {problem.detail}") from None
        self.stdout.write(f"Verifier controls set for {platform.name}.")
