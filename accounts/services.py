"""Every write in accounts: tenants, members, subject links, agent tokens, audit rows."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import (
    DEFAULT_CAPABILITIES,
    ActorKind,
    AgentToken,
    AuditEvent,
    AuthorityCeiling,
    Capability,
    Membership,
    Role,
    SubjectOwnership,
    Tenant,
)
from accounts.selectors import token_owner_choices
from common.transitions import ANY_ROLE, Moves

TOKEN_PREFIX = "mdk_"  # noqa: S105 - a public marker, not a secret


def audit_record(
    *,
    tenant: Tenant,
    actor: Actor,
    verb: str,
    target_type: str,
    target_id: Any,
    reason: str = "",
    data: dict[str, Any] | None = None,
) -> AuditEvent:
    """Append one audit row. Call it inside the transaction of the change it records."""
    return AuditEvent.objects.create(
        tenant=tenant,
        actor_kind=actor.kind,
        actor_id=actor.id,
        actor_label=actor.label,
        verb=verb,
        target_type=target_type,
        target_id=str(target_id),
        reason=reason[:500],
        data=data or {},
    )


def tenant_create(*, slug: str, name: str = "") -> tuple[Tenant, bool]:
    """Create a tenant, or return the existing one with that slug (idempotent)."""
    with transaction.atomic():
        tenant, created = Tenant.objects.get_or_create(slug=slug, defaults={"name": name or slug})
        if created:
            audit_record(
                tenant=tenant,
                actor=Actor.system("operator"),
                verb="tenant.created",
                target_type="tenant",
                target_id=tenant.pk,
            )
    return tenant, created


def member_create(
    *, tenant: Tenant, username: str, password: str | None, role: str, actor: Actor | None = None
) -> Membership:
    """Create or update a user and their role in a tenant (idempotent)."""
    if role not in Role.values:
        raise ValueError(f"unknown role {role!r}; choose one of {', '.join(Role.values)}")
    actor = actor or Actor.system("operator")
    user_model = get_user_model()
    with transaction.atomic():
        user, _ = user_model.objects.get_or_create(username=username)
        if password:
            user.set_password(password)
            user.save(update_fields=["password"])
        membership, created = Membership.objects.update_or_create(
            tenant=tenant, user=user, defaults={"role": role}
        )
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="member.created" if created else "member.updated",
            target_type="user",
            target_id=user.pk,
            data={"role": role},
        )
    return membership


def subject_link(*, tenant: Tenant, user: Any, subject_key: str) -> SubjectOwnership:
    """Make `user` the owner of a subject, so they see and may delete its memories."""
    kind, sep, ref = subject_key.partition(":")
    if not sep or not kind or not ref:
        raise ValueError("a subject is written kind:ref, e.g. user:alice")
    with transaction.atomic():
        link, created = SubjectOwnership.objects.get_or_create(
            tenant=tenant, user=user, subject_key=subject_key
        )
        if created:
            audit_record(
                tenant=tenant,
                actor=Actor.system("operator"),
                verb="subject.linked",
                target_type="user",
                target_id=user.pk,
                data={"subject": subject_key},
            )
    return link


def hash_token_secret(secret: str) -> str:
    # The secret has 256 bits of entropy, so a fast hash is safe here and
    # keeps authentication a single indexed lookup.
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True)
class IssuedToken:
    token: AgentToken
    secret: str


def agent_token_create(
    *,
    tenant: Tenant,
    name: str,
    capabilities: Iterable[str] | None = None,
    allowed_subjects: Iterable[str] = (),
    max_authority: str = AuthorityCeiling.AGENT_INFERRED,
    actor: Actor | None = None,
    owner: Any = None,
) -> IssuedToken:
    """Issue a token acting for `owner`. The secret is returned once and never stored.

    The owner defaults to the person issuing it; an admin may name another
    member of the tenant. Issued by memdesk itself with no owner named, the
    token belongs to nobody and can never be anyone's second pair of eyes.
    """
    actor = actor or Actor.system("operator")
    if owner is None and actor.kind == ActorKind.USER:
        owner = get_user_model().objects.get(pk=actor.id)
    if owner is not None and not token_owner_choices(tenant=tenant).filter(user=owner).exists():
        raise ValueError(
            f"{owner} is not staff of {tenant.slug}; a token's owner is an editor, admin or "
            "auditor of its tenant"
        )
    caps = sorted(set(capabilities or DEFAULT_CAPABILITIES))
    unknown = set(caps) - set(Capability.values)
    if unknown:
        raise ValueError(f"unknown capabilities: {', '.join(sorted(unknown))}")
    if max_authority not in AuthorityCeiling.values:
        raise ValueError(f"unknown authority ceiling: {max_authority}")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        token = AgentToken.objects.create(
            tenant=tenant,
            name=name,
            prefix=secret[: len(TOKEN_PREFIX) + 6],
            secret_hash=hash_token_secret(secret),
            capabilities=caps,
            allowed_subjects=sorted(set(allowed_subjects)),
            max_authority=max_authority,
            owner=owner,
        )
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="agent_token.created",
            target_type="agent_token",
            target_id=token.pk,
            data={
                "capabilities": caps,
                "allowed_subjects": token.allowed_subjects,
                "max_authority": max_authority,
                "owner": owner.pk if owner is not None else None,
            },
        )
    return IssuedToken(token=token, secret=secret)


def agent_token_revoke(*, token: AgentToken, actor: Actor, reason: str = "") -> AgentToken:
    with transaction.atomic():
        locked = AgentToken.objects.select_for_update().get(pk=token.pk)
        if locked.revoked_at is None:
            locked.revoked_at = timezone.now()
            locked.save(update_fields=["revoked_at"])
            audit_record(
                tenant=locked.tenant,
                actor=actor,
                verb="agent_token.revoked",
                target_type="agent_token",
                target_id=locked.pk,
                reason=reason,
            )
    return locked


def agent_token_touch(*, token: AgentToken) -> None:
    """Record use, at most once a minute per token, so reads do not all become writes."""
    now = timezone.now()
    threshold = now - timedelta(seconds=settings.AGENT_TOKEN_TOUCH_SECONDS)
    if token.last_used_at is None or token.last_used_at < threshold:
        AgentToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now


def audit_moves(moves: Moves) -> None:
    """The audit rows of a `common.transitions` move, one per row moved, in one insert."""
    machine = moves.machine
    if machine.verb is None:
        return
    verb = machine.verb.format(to=moves.to)
    actor = moves.actor
    # A machine whose moves carry roles says which role moved; a plain one has none to say.
    by = {} if moves.by == ANY_ROLE else {"by": moves.by}
    AuditEvent.objects.bulk_create(
        AuditEvent(
            tenant=moves.tenant,
            actor_kind=actor.kind,
            actor_id=actor.id,
            actor_label=actor.label,
            verb=verb,
            target_type=machine.target_type or machine.label,
            target_id=str(pk),
            reason=moves.reason[:500],
            data={"from": source, **by, **moves.data},
        )
        for pk, source in moves.moved
    )
