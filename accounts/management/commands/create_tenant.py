from django.core.management.base import BaseCommand, CommandParser

from accounts.services import tenant_create


class Command(BaseCommand):
    help = "Create a tenant (does nothing if it already exists)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--name", default="")

    def handle(self, *args: object, slug: str, name: str, **options: object) -> None:
        tenant, created = tenant_create(slug=slug, name=name)
        verb = "created" if created else "already exists"
        self.stdout.write(f"tenant {tenant.slug} {verb} (id {tenant.pk})")
