from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.actors import Actor
from accounts.management.commands._lookup import tenant_by_slug
from accounts.selectors import agent_token_by_name, agent_tokens
from accounts.services import agent_token_revoke


class Command(BaseCommand):
    help = (
        "Revoke an agent token by name; its next request is refused with 401. "
        "Revoking a revoked token changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--name", required=True)
        parser.add_argument("--reason", default="", help="Recorded in the audit trail.")

    def handle(self, *args: object, **options: object) -> None:
        tenant = tenant_by_slug(str(options["tenant"]))
        name = str(options["name"])
        token = agent_token_by_name(tenant=tenant, name=name)
        if token is None:
            known = ", ".join(agent_tokens(tenant=tenant).values_list("name", flat=True)[:20])
            raise CommandError(
                f"no token named {name!r} in {tenant.slug}"
                + (f"; its tokens are: {known}" if known else "; it has no tokens")
            )
        if token.revoked_at is not None:
            self.stdout.write(
                f"token {name} of {tenant.slug} was already revoked at "
                f"{token.revoked_at:%Y-%m-%d %H:%M:%S %Z}; nothing changed"
            )
            return
        revoked = agent_token_revoke(
            token=token, actor=Actor.system("operator"), reason=str(options["reason"])
        )
        self.stdout.write(
            f"revoked token {name} of {tenant.slug} ({revoked.prefix}…); its next request gets 401"
        )
