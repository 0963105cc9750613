"""Who the caller is and what they may do, decided once per API request.

Every API view reads the tenant and actor from `api_context(request)`; nothing
takes a tenant from the request body.
"""

from __future__ import annotations

from dataclasses import dataclass

from rest_framework import exceptions, permissions
from rest_framework.request import Request

from accounts.actors import Actor, AgentPrincipal
from accounts.models import ActorKind, Membership, Role, Tenant
from accounts.selectors import membership_for_user
from common.problems import Problem


@dataclass(frozen=True)
class ApiContext:
    tenant: Tenant
    actor: Actor
    # None: every subject of the tenant. Otherwise the only subject keys allowed.
    allowed_subjects: frozenset[str] | None
    membership: Membership | None = None

    @property
    def is_agent(self) -> bool:
        return self.actor.kind == ActorKind.AGENT

    def may_touch_subject(self, subject_key: str) -> bool:
        return self.allowed_subjects is None or subject_key in self.allowed_subjects


def api_context(request: Request) -> ApiContext:
    cached = getattr(request, "_memdesk_context", None)
    if cached is not None:
        return cached
    user = request.user
    if isinstance(user, AgentPrincipal):
        allowed = frozenset(user.token.allowed_subjects) or None
        context = ApiContext(tenant=user.tenant, actor=user.actor, allowed_subjects=allowed)
    else:
        if user is None or not user.is_authenticated:
            raise exceptions.NotAuthenticated()
        membership = membership_for_user(user=user, tenant_id=request.session.get("tenant_id"))
        if membership is None:
            raise Problem(
                "no_membership",
                "This account is not a member of any tenant.",
                status_code=403,
            )
        context = ApiContext(
            tenant=membership.tenant,
            actor=Actor.for_user(user, membership.role),
            allowed_subjects=None,
            membership=membership,
        )
    # A per-request memo; neither DRF's nor Django's request type declares it.
    request._memdesk_context = context  # type: ignore[attr-defined]
    return context


def capability_required(*capabilities: str) -> type[permissions.BasePermission]:
    """A permission class: the caller is an agent token holding one of `capabilities`."""
    wanted = " or ".join(f"`{c}`" for c in capabilities)

    class HasCapability(permissions.BasePermission):
        def has_permission(self, request: Request, view: object) -> bool:
            context = api_context(request)
            if not context.is_agent or not context.actor.capabilities.intersection(capabilities):
                raise Problem(
                    "capability_required",
                    f"This call needs an agent token with the {wanted} capability.",
                    status_code=403,
                    capability=capabilities[0],
                    capabilities=list(capabilities),
                )
            return True

    HasCapability.__name__ = f"HasCapability[{'|'.join(capabilities)}]"
    return HasCapability


def role_required(*roles: str) -> type[permissions.BasePermission]:
    """A permission class: the caller is a console user with one of `roles`."""

    class HasRole(permissions.BasePermission):
        def has_permission(self, request: Request, view: object) -> bool:
            context = api_context(request)
            allowed = set(roles)
            if Role.EDITOR in allowed:
                allowed.add(Role.ADMIN)
            if context.is_agent or context.actor.role not in allowed:
                raise Problem(
                    "role_required",
                    f"This call needs a signed-in {' or '.join(roles)}.",
                    status_code=403,
                    roles=list(roles),
                )
            return True

    HasRole.__name__ = f"HasRole[{','.join(roles)}]"
    return HasRole


def idempotency_scope(request: Request) -> tuple[int, str]:
    """Idempotency keys are scoped to the tenant and the calling token or person."""
    context = api_context(request)
    return context.tenant.pk, f"{context.actor.kind}:{context.actor.id}"
