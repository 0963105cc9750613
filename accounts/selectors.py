"""Reads in accounts that depend on who is asking."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

from django.contrib.auth import get_user_model
from django.db.models import F, QuerySet

from accounts.actors import person_key
from accounts.models import (
    ActorKind,
    AgentToken,
    AuditEvent,
    Membership,
    Role,
    SubjectOwnership,
    Tenant,
)
from common.rows import RowReader, fetch_one

# Token and membership rows carry their tenant's columns after their own, under `n`.
_TENANT = RowReader(Tenant, alias="n")
_MEMBERSHIP = RowReader(Membership, alias="m")
# The chosen tenant's membership first (a NULL choice matches none), else the oldest.
_MEMBERSHIP_FOR_USER = f"""
    SELECT {_MEMBERSHIP.columns}, {_TENANT.columns}
    FROM {Membership._meta.db_table} m JOIN {Tenant._meta.db_table} n ON n.id = m.tenant_id
    WHERE m.user_id = %s
    ORDER BY m.tenant_id IS NOT DISTINCT FROM %s DESC, m.id
    LIMIT 1
"""  # noqa: S608 - table names are constants; every value is a parameter


# The models whose rows arrive with their tenant's columns after their own.
WithTenant = TypeVar("WithTenant", AgentToken, Membership)


def _with_tenant(reader: RowReader[WithTenant], sql: str, params: list[Any]) -> WithTenant | None:
    """The first row of `sql` as `reader`'s model, its tenant (the columns after) loaded."""
    row = fetch_one(sql, params)
    if row is None:
        return None
    found = reader.build(row)
    found.tenant = _TENANT.build(row, start=reader.width)
    return found


def membership_for_user(*, user: Any, tenant_id: int | None = None) -> Membership | None:
    """The membership a console user acts through (the chosen tenant, else their first).

    Every console page asks: one fixed statement rather than one or two compiled ones,
    and none when no tenant is chosen and the user was read with their first membership
    (`user_with_first_membership`)."""
    if not getattr(user, "is_authenticated", False) or not hasattr(user, "memberships"):
        return None
    if tenant_id is None and hasattr(user, _FIRST_MEMBERSHIP):
        first: Membership | None = getattr(user, _FIRST_MEMBERSHIP)
        return first
    return _with_tenant(_MEMBERSHIP, _MEMBERSHIP_FOR_USER, [user.pk, tenant_id])


User = get_user_model()
_USER = RowReader(User, alias="u")
# Not a column: the user's first membership (its tenant loaded), or None, read with them.
_FIRST_MEMBERSHIP = "_memdesk_first_membership"
_USER_WITH_FIRST_MEMBERSHIP = f"""
    SELECT {_USER.columns}, {_MEMBERSHIP.columns}, {_TENANT.columns}
    FROM {User._meta.db_table} u
    LEFT JOIN LATERAL (
        SELECT * FROM {Membership._meta.db_table} m WHERE m.user_id = u.id ORDER BY m.id LIMIT 1
    ) m ON true
    LEFT JOIN {Tenant._meta.db_table} n ON n.id = m.tenant_id
    WHERE u.{User._meta.pk.column} = %s
"""  # noqa: S608 - names from the models' metadata; the id is a parameter


def user_with_first_membership(*, user_id: Any) -> Any:
    """The user with this id (None if there is none), as the authentication backend reads
    them on each signed-in request, with their first membership attached: the console's
    membership lookup (`membership_for_user`, no tenant chosen) then needs no statement."""
    row = fetch_one(_USER_WITH_FIRST_MEMBERSHIP, [user_id])
    if row is None:
        return None
    user = _USER.build(row)
    membership = None
    if row[_USER.width] is not None:
        membership = _MEMBERSHIP.build(row, start=_USER.width)
        membership.tenant = _TENANT.build(row, start=_USER.width + _MEMBERSHIP.width)
    setattr(user, _FIRST_MEMBERSHIP, membership)
    return user


def owned_subject_keys(*, tenant: Tenant, user: Any) -> list[str]:
    return list(
        SubjectOwnership.objects.filter(tenant=tenant, user=user)
        .order_by("subject_key")
        .values_list("subject_key", flat=True)
    )


_TOKEN = RowReader(AgentToken, alias="t")
_TOKEN_BY_SECRET_HASH = f"""
    SELECT {_TOKEN.columns}, {_TENANT.columns}
    FROM {AgentToken._meta.db_table} t JOIN {Tenant._meta.db_table} n ON n.id = t.tenant_id
    WHERE t.secret_hash = %s AND t.revoked_at IS NULL
"""  # noqa: S608 - table names are constants; the hash is a parameter


def agent_token_by_secret_hash(*, secret_hash: str) -> AgentToken | None:
    """The live token with this secret hash (unique), its tenant loaded: every agent call
    asks, so the SQL is written once rather than compiled per request."""
    return _with_tenant(_TOKEN, _TOKEN_BY_SECRET_HASH, [secret_hash])


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
    return (
        AgentToken.objects.filter(tenant=tenant)
        .select_related("owner")
        .order_by(F("revoked_at").desc(nulls_first=True), "name", "id")
    )


def agent_token_get(*, tenant: Tenant, token_id: int) -> AgentToken | None:
    return AgentToken.objects.select_related("tenant").filter(tenant=tenant, pk=token_id).first()


def agent_token_by_name(*, tenant: Tenant, name: str) -> AgentToken | None:
    return AgentToken.objects.select_related("tenant").filter(tenant=tenant, name=name).first()


def persons_of(*, tenant: Tenant, actors: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The person (`Actor.person`) behind each actor recorded as `(kind, id)`, in one query.

    A token is read for its owner; a token of another tenant, or none at all,
    is nobody's (`token:<id>`), which never equals a person.
    """
    actors = set(actors)
    token_ids = {int(i) for kind, i in actors if kind == ActorKind.AGENT and i.isdigit()}
    owners = (
        dict(
            AgentToken.objects.filter(tenant=tenant, pk__in=token_ids, owner__isnull=False)
            .values_list("pk", "owner_id")
            .iterator()
        )
        if token_ids
        else {}
    )
    return {
        (kind, actor_id): person_key(
            kind,
            actor_id,
            owner_id=str(owners[int(actor_id)])
            if kind == ActorKind.AGENT and actor_id.isdigit() and int(actor_id) in owners
            else None,
        )
        for kind, actor_id in actors
    }


def person_of(*, tenant: Tenant, kind: str, actor_id: str) -> str:
    return persons_of(tenant=tenant, actors=[(kind, actor_id)])[(kind, actor_id)]


def token_owner_choices(*, tenant: Tenant) -> QuerySet[Membership]:
    """The members an admin may name as a token's owner: the tenant's staff."""
    return (
        Membership.objects.filter(tenant=tenant)
        .exclude(role=Role.USER)
        .select_related("user")
        .order_by("user__username")
    )
