from django.contrib import admin
from django.db.models import Model
from django.http import HttpRequest

from accounts.models import AgentToken, AuditEvent, Membership, SubjectOwnership, Tenant


class ReadOnlyAdmin(admin.ModelAdmin):
    """The admin is for looking. Changes go through services (and so the audit log)."""

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


@admin.register(Tenant)
class TenantAdmin(ReadOnlyAdmin):
    list_display = ["slug", "name", "created_at"]
    search_fields = ["slug", "name"]


@admin.register(Membership)
class MembershipAdmin(ReadOnlyAdmin):
    list_display = ["user", "tenant", "role"]
    list_filter = ["role", "tenant"]


@admin.register(SubjectOwnership)
class SubjectOwnershipAdmin(ReadOnlyAdmin):
    list_display = ["user", "tenant", "subject_key"]


@admin.register(AgentToken)
class AgentTokenAdmin(ReadOnlyAdmin):
    list_display = ["name", "tenant", "prefix", "last_used_at", "revoked_at"]


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ["at", "actor_label", "verb", "target_type", "target_id", "reason"]
    list_filter = ["verb", "actor_kind"]
