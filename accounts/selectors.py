"""Reads in accounts that depend on who is asking."""

from __future__ import annotations

from typing import Any

from django.db.models import F, QuerySet

from accounts.models import AgentToken, AuditEvent, Membership, SubjectOwnership, Tenant


def membership_for_user(*, user: Any, tenant_id: int | None = None) -> Membership | None:
    """The membership a console user acts through (the chosen tenant, else their first)."""
    if not getattr(user, "is_authenticated", False) or not hasattr(user, "memberships"):
        return None
    memberships = Membership.objects.select_related("tenant").filter(user=user).order_by("id")
    if tenant_id is not None:
        chosen = memberships.filter(tenant_id=tenant_id).first()
        if chosen is not None:
            return chosen
    return memberships.first()


def owned_subject_keys(*, tenant: Tenant, user: Any) -> list[str]:
    return list(
        SubjectOwnership.objects.filter(tenant=tenant, user=user)
        .order_by("subject_key")
        .values_list("subject_key", flat=True)
    )


def agent_token_by_secret_hash(*, secret_hash: str) -> AgentToken | None:
    return (
        AgentToken.objects.select_related("tenant")
        .filter(secret_hash=secret_hash, revoked_at__isnull=True)
        .first()
    )


def audit_trail(*, tenant: Tenant, target_type: str, target_id: Any) -> QuerySet[AuditEvent]:
    return AuditEvent.objects.filter(
        tenant=tenant, target_type=target_type, target_id=str(target_id)
    ).order_by("at", "id")


def request_membership(request: Any) -> Membership | None:
    """The signed-in person's membership, looked up once per request."""
    if not hasattr(request, "_memdesk_membership"):
        request._memdesk_membership = membership_for_user(
            user=getattr(request, "user", None), tenant_id=request.session.get("tenant_id")
        )
    membership: Membership | None = request._memdesk_membership
    return membership


def agent_tokens(*, tenant: Tenant) -> QuerySet[AgentToken]:
    """A tenant's tokens for the admin page: live ones first, then by name."""
    return AgentToken.objects.filter(tenant=tenant).order_by(
        F("revoked_at").desc(nulls_first=True), "name", "id"
    )


def agent_token_get(*, tenant: Tenant, token_id: int) -> AgentToken | None:
    return AgentToken.objects.select_related("tenant").filter(tenant=tenant, pk=token_id).first()


def agent_token_by_name(*, tenant: Tenant, name: str) -> AgentToken | None:
    return AgentToken.objects.select_related("tenant").filter(tenant=tenant, name=name).first()
