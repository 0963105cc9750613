"""`manage.py set_operation_policy --tenant T --platform P --operation O [requirements]`."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.actors import Actor
from accounts.management.commands._lookup import tenant_by_slug
from common.problems import Problem
from memory.receipts.services.platforms import operation_policy_set


class Command(BaseCommand):
    help = (
        "Say what an agent's `succeeded` needs for an operation on a registered platform: "
        "the external id, named evidence fields, memdesk's own verifying read and/or a "
        "person's approval before the call. "
        "Setting it again replaces the operation's policy."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--platform", required=True, help="a registered platform's name")
        parser.add_argument("--operation", required=True, help="as receipts name it")
        parser.add_argument("--require-external-id", action="store_true")
        parser.add_argument(
            "--evidence-field",
            action="append",
            default=[],
            dest="evidence_fields",
            help="a key the report's evidence must carry (repeat for several)",
        )
        parser.add_argument("--require-verifying-read", action="store_true")
        parser.add_argument(
            "--approval-required",
            action="store_true",
            help="each receipt waits for another person's approval before it is submitted",
        )
        parser.add_argument(
            "--compensate-on-failure",
            action="store_true",
            help="recovery answers `compensate` for a failed effect with a planned compensation",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_by_slug(options["tenant"])
        try:
            policy, created = operation_policy_set(
                tenant=tenant,
                actor=Actor.system("manage.py set_operation_policy"),
                platform=options["platform"],
                operation=options["operation"],
                require_external_id=options["require_external_id"],
                evidence_fields=options["evidence_fields"],
                require_verifying_read=options["require_verifying_read"],
                approval_required=options["approval_required"],
                compensate_on_failure=options["compensate_on_failure"],
            )
        except Problem as problem:
            raise CommandError(f"{problem.code}: {problem.detail}") from None
        verb = "set" if created else "replaced"
        self.stdout.write(
            f"{verb} the policy for {policy.operation} on {options['platform']} "
            f"({tenant.slug}): {', '.join(policy.requirements())}"
        )
