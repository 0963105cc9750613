from django.core.management.base import CommandError

from accounts.models import Tenant


def tenant_by_slug(slug: str) -> Tenant:
    tenant = Tenant.objects.filter(slug=slug).first()
    if tenant is None:
        raise CommandError(f"no tenant {slug!r}; create it with `manage.py create_tenant {slug}`")
    return tenant
