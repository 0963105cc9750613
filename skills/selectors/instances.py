"""What a caller may run: its token's grants, and whether its latest instance of a version
is ready (resolve and body serve a version to an agent only then)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from accounts.actors import Actor
from accounts.models import ActorKind, Tenant
from skills.usage_models import GrantKind, InstanceState, SkillInstance, TokenGrant


@dataclass(frozen=True)
class Grants:
    tools: frozenset[str]
    capabilities: frozenset[str]


def token_grants_of(*, tenant: Tenant, actor: Actor) -> Grants:
    """The tools and runtime capabilities an admin granted the acting token (none for
    anyone else: people and memdesk run no skills)."""
    if actor.kind != ActorKind.AGENT:
        return Grants(frozenset(), frozenset())
    rows = TokenGrant.objects.filter(tenant=tenant, token_id=int(actor.id)).values_list(
        "kind", "name"
    )
    return Grants(
        tools=frozenset(name for kind, name in rows if kind == GrantKind.TOOL),
        capabilities=frozenset(name for kind, name in rows if kind == GrantKind.CAPABILITY),
    )


def token_grants(*, tenant: Tenant, token_id: int | None = None) -> QuerySet[TokenGrant]:
    grants = TokenGrant.objects.filter(tenant=tenant).select_related("token")
    if token_id is not None:
        grants = grants.filter(token_id=token_id)
    return grants.order_by("token_id", "kind", "name")


def token_grant_get(*, tenant: Tenant, pk: int) -> TokenGrant | None:
    return TokenGrant.objects.filter(tenant=tenant, pk=pk).select_related("token").first()


def load_refusals(*, tenant: Tenant, version_id: int, actor: Actor) -> list[dict[str, Any]]:
    """Why the caller may not load the version now: empty when its latest instance of it
    is ready. Only agents run skills; a person's session reads a version to review it."""
    if actor.kind != ActorKind.AGENT:
        return []
    latest = (
        SkillInstance.objects.filter(
            tenant=tenant, version_id=version_id, caller_kind=actor.kind, caller_id=actor.id
        )
        .order_by("-created_at")
        .first()
    )
    if latest is None:
        return [
            {
                "code": "not_instantiated",
                "detail": "Instantiate the version first (POST …/instantiate) with this task's "
                "inputs and bindings.",
            }
        ]
    if latest.state == InstanceState.INVALIDATED:
        return [
            {
                "code": "instance_invalidated",
                "detail": f"Your instance {latest.pk} was invalidated: "
                f"{latest.invalidated_reason}. Instantiate again.",
            }
        ]
    return list(latest.reasons) if latest.state == InstanceState.BLOCKED else []
