"""Instances: the instantiation check recorded as a plan, the grants it checks against,
loading without a ready instance (overridden, audited), and invalidation when a
credential slot's secret, a tool or grant, or the production label changes."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import ActorKind, AgentToken, Tenant
from accounts.services import audit_record
from common.problems import Problem
from common.screen import find_secrets_in_strings, find_secrets_in_value
from common.transitions import move_many
from skills import selectors
from skills.instantiation import Instantiation, check_instantiation
from skills.models import RetiredTool, SkillVersion, VersionStatus
from skills.package.manifest import TOOL_NAME
from skills.services.base import actor_fields, audit, require_admin, require_reason
from skills.usage_models import (
    INSTANCE_MACHINE,
    GrantKind,
    InstanceState,
    SkillInstance,
    TokenGrant,
)

LIVE_STATES = (InstanceState.READY, InstanceState.BLOCKED)


def skill_version_instantiate(
    *,
    tenant: Tenant,
    version: SkillVersion,
    actor: Actor,
    bindings: dict[str, str],
    inputs: dict[str, Any],
    tools: list[str] | None,
    capabilities: list[str] | None,
) -> tuple[SkillInstance, Instantiation]:
    """Check the version against the caller's grants, bindings and inputs; record the
    answer as the caller's current instance of the version (its earlier live ones are
    invalidated: this one replaces them) and audit it.

    Binding a slot the skill does not declare, or anything that looks like a credential
    instead of a secret's name (in bindings or inputs), is a 400 and records nothing.
    """
    if version.status == VersionStatus.REVOKED:
        raise selectors.version_revoked_problem(version)
    declared = {slot["slot"] for slot in version.manifest.get("credentials") or []}
    unknown = sorted(set(bindings) - declared)
    if unknown:
        raise Problem(
            "validation_error",
            f"{version.skill.slug} v{version.number} has no credential slot "
            f"{', '.join(unknown)}; its slots are {', '.join(sorted(declared)) or 'none'}.",
            errors={"bindings": [f"Unknown slot: {slot}" for slot in unknown]},
        )
    # The values only: a slot named `blog_token` bound to a name is no credential pair.
    if find_secrets_in_strings(bindings.values()) or find_secrets_in_value(inputs):
        raise Problem(
            "secret_detected",
            "A binding or input holds what looks like a credential. Bind each slot to the "
            "name of a secret you hold elsewhere; memdesk never receives secret values.",
        )
    retired = frozenset(
        RetiredTool.objects.filter(
            tenant=tenant, name__in=version.manifest.get("tools") or []
        ).values_list("name", flat=True)
    )
    grants = selectors.token_grants_of(tenant=tenant, actor=actor)
    answer = check_instantiation(
        status=version.status,
        manifest=version.manifest,
        bindings=bindings,
        inputs=inputs,
        granted_tools=grants.tools,
        granted_capabilities=grants.capabilities,
        said_tools=frozenset(tools) if tools is not None else None,
        said_capabilities=frozenset(capabilities) if capabilities is not None else None,
        token_capabilities=actor.capabilities,
        retired_tools=retired,
    )
    with transaction.atomic():
        instances_invalidate(
            tenant=tenant,
            actor=actor,
            instances=SkillInstance.objects.filter(
                tenant=tenant, version=version, caller_kind=actor.kind, caller_id=actor.id
            ),
            reason="replaced by a new instantiation",
        )
        instance = SkillInstance.objects.create(
            tenant=tenant,
            version=version,
            state=answer.state,
            reasons=[reason.__dict__ for reason in answer.reasons],
            bindings=dict(sorted(bindings.items())),
            input_names=sorted(inputs),
            tools=sorted(set(version.manifest.get("tools") or [])),
            capabilities=sorted(set(version.manifest.get("capabilities") or [])),
            **actor_fields(actor, "caller"),
        )
        audit(
            tenant=tenant,
            actor=actor,
            verb="skill_version.instantiated",
            version=version,
            data={
                "instance": str(instance.pk),
                "state": answer.state,
                "reasons": [reason.code for reason in answer.reasons],
                # Names of secrets and inputs, never values; secrets never reach memdesk.
                "bindings": dict(sorted(bindings.items())),
                "inputs": sorted(inputs),
            },
        )
    return instance, answer


def instances_invalidate(
    *, tenant: Tenant, actor: Actor, instances: Any, reason: str
) -> list[SkillInstance]:
    """Invalidate the live instances among ``instances`` (a queryset), one audited batch.

    Each row moves through the state guard (the trigger refuses any other move)."""
    with transaction.atomic():
        live = list(
            instances.filter(tenant=tenant, state__in=LIVE_STATES)
            .select_for_update()
            .select_related("version__skill")
        )
        if not live:
            return []
        changes = {"invalidated_at": timezone.now(), "invalidated_reason": reason[:1000]}
        move_many(
            INSTANCE_MACHINE,
            SkillInstance.objects.filter(tenant=tenant, pk__any=[i.pk for i in live]),
            to=InstanceState.INVALIDATED,
            tenant=tenant,
            actor=actor,
            reason=reason,
            changes=changes,
        )
        for instance in live:
            instance.state = InstanceState.INVALIDATED
            instance.invalidated_at = changes["invalidated_at"]
            instance.invalidated_reason = changes["invalidated_reason"]
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="skill_instances.invalidated",
            target_type="skill_instance",
            target_id=live[0].pk,
            reason=reason,
            data={"instances": [str(instance.pk) for instance in live]},
        )
    return live


def instances_of_version_invalidate(
    *, tenant: Tenant, actor: Actor, version: SkillVersion, reason: str
) -> list[SkillInstance]:
    return instances_invalidate(
        tenant=tenant,
        actor=actor,
        instances=SkillInstance.objects.filter(version=version),
        reason=reason,
    )


def credential_changed(
    *, tenant: Tenant, actor: Actor, secret: str, reason: str
) -> list[SkillInstance]:
    """A secret a slot is bound to was rotated or withdrawn: every instance of the tenant
    bound to that name must be checked again."""
    reason = require_reason(reason, doing="report a changed credential")
    if find_secrets_in_strings([secret]):
        raise Problem(
            "secret_detected",
            "Send the name of the secret, never its value; memdesk never receives secrets.",
        )
    live = SkillInstance.objects.filter(tenant=tenant, state__in=LIVE_STATES).exclude(bindings={})
    bound = [
        pk for pk, bindings in live.values_list("pk", "bindings") if secret in bindings.values()
    ]
    return instances_invalidate(
        tenant=tenant,
        actor=actor,
        instances=SkillInstance.objects.filter(pk__in=bound),
        reason=f"credential {secret} changed: {reason}",
    )


def token_grant_add(
    *, tenant: Tenant, actor: Actor, token: AgentToken, kind: str, name: str
) -> TokenGrant:
    """An admin grants one agent token a tool or a runtime capability."""
    require_admin(actor, doing="grant a tool or capability")
    if kind not in GrantKind.values or not TOOL_NAME.fullmatch(name):
        raise Problem(
            "validation_error",
            "A grant is a `tool` or `capability` named by 1-100 letters, digits, `_`, `.`, "
            "`:` or `-`.",
            errors={"name": ["Not a tool or capability name."]},
        )
    with transaction.atomic():
        try:
            with transaction.atomic():
                grant = TokenGrant.objects.create(
                    tenant=tenant, token=token, kind=kind, name=name, **actor_fields(actor, "actor")
                )
        except IntegrityError as exc:
            raise Problem(
                "grant_exists", f"{token.name} holds the {kind} {name} already.", status_code=409
            ) from exc
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="token_grant.added",
            target_type="agent_token",
            target_id=token.pk,
            data={"kind": kind, "name": name},
        )
    return grant


def token_grant_remove(*, tenant: Tenant, actor: Actor, grant: TokenGrant) -> list[SkillInstance]:
    """Withdraw a grant; the token's live instances of skills needing it are invalidated."""
    require_admin(actor, doing="withdraw a grant")
    with transaction.atomic():
        locked = TokenGrant.objects.select_for_update().get(tenant=tenant, pk=grant.pk)
        field = "tools" if locked.kind == GrantKind.TOOL else "capabilities"
        affected = SkillInstance.objects.filter(
            caller_kind=ActorKind.AGENT,
            caller_id=str(locked.token_id),
            **{f"{field}__contains": [locked.name]},
        )
        invalidated = instances_invalidate(
            tenant=tenant,
            actor=actor,
            instances=affected,
            reason=f"the {locked.kind} {locked.name} was withdrawn from the token",
        )
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="token_grant.removed",
            target_type="agent_token",
            target_id=locked.token_id,
            data={"kind": locked.kind, "name": locked.name, "invalidated": len(invalidated)},
        )
        locked.delete()
    return invalidated


def skill_load_override_record(
    *, tenant: Tenant, actor: Actor, version_id: int, reason: str, reasons: list[dict[str, Any]]
) -> None:
    """The caller loaded a version it has no ready instance of, and said why."""
    version = SkillVersion.objects.select_related("skill").get(tenant=tenant, pk=version_id)
    audit(
        tenant=tenant,
        actor=actor,
        verb="skill_version.loaded_without_instance",
        version=version,
        reason=reason,
        data={"reasons": [reason["code"] for reason in reasons]},
    )
