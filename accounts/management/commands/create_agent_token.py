from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.management.commands._lookup import tenant_by_slug
from accounts.models import AgentToken, AuthorityCeiling, Capability
from accounts.services import agent_token_create


class Command(BaseCommand):
    help = (
        "Issue an agent token. The secret is printed once, alone on the last line of stdout; "
        "only its hash is stored."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--name", required=True)
        parser.add_argument(
            "--capability",
            action="append",
            choices=Capability.values,
            dest="capabilities",
            help="Repeat for several; none means every capability but receipts:operate.",
        )
        parser.add_argument(
            "--subject",
            action="append",
            dest="subjects",
            default=[],
            help="Limit the token to these subjects (kind:ref); repeatable.",
        )
        parser.add_argument(
            "--max-authority",
            choices=AuthorityCeiling.values,
            default=AuthorityCeiling.AGENT_INFERRED,
            help="The strongest authority the token's claims may carry (default: "
            "agent_inferred). user_explicit is for front-ends that talk to the user.",
        )

        parser.add_argument(
            "--owner",
            default="",
            help="Username of the person (editor, admin or auditor of the tenant) the token "
            "acts for. Without one the token belongs to nobody and can never be a second "
            "pair of eyes (an evaluator of someone else's skill, for one).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_by_slug(str(options["tenant"]))
        name = str(options["name"])
        if AgentToken.objects.filter(tenant=tenant, name=name).exists():
            raise CommandError(
                f"a token named {name!r} exists in {tenant.slug}; tokens are shown only once, "
                "so choose another name"
            )
        owner = None
        if options["owner"]:
            owner = get_user_model().objects.filter(username=options["owner"]).first()
            if owner is None:
                raise CommandError(f"no user {options['owner']!r}; create them with create_member")
        try:
            issued = agent_token_create(
                tenant=tenant,
                name=name,
                capabilities=options["capabilities"],
                allowed_subjects=options["subjects"],
                max_authority=str(options["max_authority"]),
                owner=owner,
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        caps = ", ".join(issued.token.capabilities)
        self.stdout.write(
            f"token {name} for {tenant.slug} with {caps}, authority up to "
            f"{issued.token.max_authority}, acting for {owner or 'nobody'} (shown once):"
        )
        self.stdout.write(issued.secret)
