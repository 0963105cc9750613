"""Who the caller is and what they may do, decided once per request.

Every API view reads the tenant and actor from `api_context(request)`, every
console view its membership from `console_context(request, roles=...)`;
nothing takes a tenant from the request body.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest
from rest_framework import exceptions, permissions
from rest_framework.request import Request

from accounts.actors import Actor, AgentPrincipal
from accounts.models import ActorKind, Membership, Role, Tenant
from accounts.selectors import membership_for_user, request_membership
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


def _allowed_roles(roles: Iterable[str]) -> set[str]:
    # An admin may do whatever an editor may.
    allowed = set(roles)
    if Role.EDITOR in allowed:
        allowed.add(Role.ADMIN)
    return allowed


def _check_capability(context: ApiContext, capabilities: tuple[str, ...]) -> None:
    if context.is_agent and context.actor.capabilities.intersection(capabilities):
        return
    wanted = " or ".join(f"`{c}`" for c in capabilities)
    raise Problem(
        "capability_required",
        f"This call needs an agent token with the {wanted} capability.",
        status_code=403,
        capability=capabilities[0],
        capabilities=list(capabilities),
    )


def _check_role(context: ApiContext, roles: tuple[str, ...]) -> None:
    if not context.is_agent and context.actor.role in _allowed_roles(roles):
        return
    raise Problem(
        "role_required",
        f"This call needs a signed-in {' or '.join(roles)}.",
        status_code=403,
        roles=list(roles),
    )


def capability_required(*capabilities: str) -> type[permissions.BasePermission]:
    """A permission class: the caller is an agent token holding one of `capabilities`."""

    class HasCapability(permissions.BasePermission):
        def has_permission(self, request: Request, view: object) -> bool:
            _check_capability(api_context(request), capabilities)
            return True

    HasCapability.__name__ = f"HasCapability[{'|'.join(capabilities)}]"
    return HasCapability


def role_required(*roles: str) -> type[permissions.BasePermission]:
    """A permission class: the caller is a console user with one of `roles`."""

    class HasRole(permissions.BasePermission):
        def has_permission(self, request: Request, view: object) -> bool:
            _check_role(api_context(request), roles)
            return True

    HasRole.__name__ = f"HasRole[{','.join(roles)}]"
    return HasRole


def agent_or_people(
    capability: str | tuple[str, ...], *roles: str
) -> type[permissions.BasePermission]:
    """A permission class: an agent token holding `capability` (or one of several), or a
    person with one of `roles`.

    Each kind of caller is refused with its own code: an agent with
    `capability_required`, a person with `role_required`.
    """

    capabilities = (capability,) if isinstance(capability, str) else capability

    class AgentOrPeople(permissions.BasePermission):
        def has_permission(self, request: Request, view: object) -> bool:
            context = api_context(request)
            if context.is_agent:
                _check_capability(context, capabilities)
            else:
                _check_role(context, roles)
            return True

    AgentOrPeople.__name__ = f"AgentOrPeople[{capability};{','.join(roles)}]"
    return AgentOrPeople


# Who reads the review queues, the dashboard and the skills pages.
CONSOLE_READERS = frozenset({Role.EDITOR, Role.ADMIN, Role.AUDITOR})


def console_context(request: HttpRequest, *, roles: Iterable[str] | None = None) -> Membership:
    """The signed-in person's membership, for a console view open to `roles` (None: everyone).

    Someone who is a member of no tenant gets 404, as if the page did not
    exist: tenant isolation fails closed and says nothing. A member whose role
    is not among `roles` gets 403. An editor's page is an admin's page too.
    """
    membership = request_membership(request)
    if membership is None:
        raise Http404("This account is not a member of any tenant.")
    if roles is not None and membership.role not in _allowed_roles(roles):
        wanted = " or ".join(sorted(_allowed_roles(roles)))
        raise PermissionDenied(f"This page is for the roles {wanted}.")
    return membership


def idempotency_scope(request: Request) -> tuple[int, str]:
    """Idempotency keys are scoped to the tenant and the calling token or person."""
    context = api_context(request)
    return context.tenant.pk, f"{context.actor.kind}:{context.actor.id}"
