from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.management.commands._lookup import tenant_by_slug
from accounts.models import Role
from accounts.services import member_create


class Command(BaseCommand):
    help = "Create a console user with a role in a tenant, or update their role and password."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--username", required=True)
        parser.add_argument("--password", default=None)
        parser.add_argument("--role", required=True, choices=Role.values)

    def handle(self, *args: object, **options: str) -> None:
        tenant = tenant_by_slug(options["tenant"])
        try:
            membership = member_create(
                tenant=tenant,
                username=options["username"],
                password=options["password"],
                role=options["role"],
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{membership.user.username} is {membership.role} in {tenant.slug}")
