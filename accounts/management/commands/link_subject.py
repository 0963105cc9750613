from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.management.commands._lookup import tenant_by_slug
from accounts.services import subject_link


class Command(BaseCommand):
    help = "Make a user the owner of a subject (e.g. user:alice) so they see its memories."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--username", required=True)
        parser.add_argument("--subject", required=True, help="kind:ref, e.g. user:alice")

    def handle(self, *args: object, **options: str) -> None:
        tenant = tenant_by_slug(options["tenant"])
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"no user {options['username']!r}; create it with create_member")
        try:
            subject_link(tenant=tenant, user=user, subject_key=options["subject"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{user.username} owns {options['subject']} in {tenant.slug}")
