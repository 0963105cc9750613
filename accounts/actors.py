"""Who is acting: a person with a session, an agent with a token, or memdesk itself.

Services take an `Actor` so console, API, tasks and commands record the same
audit trail whatever the entry point. Separation of duties compares the
*person* behind an actor (`Actor.person`), never the actor itself: a token acts
for its owner, so two tokens of one person are that one person.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser

from accounts.models import ActorKind, AgentToken, Role, Tenant


@dataclass(frozen=True)
class Actor:
    kind: str
    id: str
    label: str
    role: str | None = None
    capabilities: frozenset[str] = field(default_factory=frozenset)
    # Only tokens have these. A token's ceiling bounds the authority of every
    # claim it writes; people and memdesk itself have none (None). Allowed
    # subjects: None means every subject of the tenant.
    max_authority: str | None = None
    allowed_subjects: frozenset[str] | None = None
    # The user a token acts for; None for a token nobody owns. A person is
    # themselves (their own id), so this is set only for tokens.
    owner_id: str | None = None

    @classmethod
    def system(cls, label: str = "memdesk") -> Actor:
        return cls(kind=ActorKind.SYSTEM, id="", label=label)

    @classmethod
    def for_user(cls, user: AbstractBaseUser | AnonymousUser, role: str | None) -> Actor:
        return cls(kind=ActorKind.USER, id=str(user.pk), label=user.get_username(), role=role)

    @classmethod
    def for_token(cls, token: AgentToken) -> Actor:
        return cls(
            kind=ActorKind.AGENT,
            id=str(token.pk),
            label=token.name,
            capabilities=frozenset(token.capabilities),
            max_authority=token.max_authority,
            allowed_subjects=frozenset(token.allowed_subjects) or None,
            owner_id=str(token.owner_id) if token.owner_id is not None else None,
        )

    @property
    def person(self) -> str:
        """Who answers for this action: one key per person, whatever door they came through."""
        return person_key(self.kind, self.id, owner_id=self.owner_id)

    @property
    def is_accountable(self) -> bool:
        """A known person: someone signed in, or a token with an owner.

        Only an accountable actor may be a second pair of eyes: an ownerless
        token might be anyone, the author included.
        """
        return self.kind == ActorKind.USER or self.owner_id is not None

    def may_touch_subject(self, subject_key: str) -> bool:
        return self.allowed_subjects is None or subject_key in self.allowed_subjects

    @property
    def token_id(self) -> int | None:
        """The agent token acting, as rows that record their owner store it."""
        return int(self.id) if self.kind == ActorKind.AGENT and self.id else None

    @property
    def is_admin(self) -> bool:
        return self.kind == ActorKind.USER and self.role == Role.ADMIN

    @property
    def is_editor(self) -> bool:
        return self.kind == ActorKind.USER and self.role in {Role.EDITOR, Role.ADMIN}


def person_key(kind: str, actor_id: str, *, owner_id: str | None = None) -> str:
    """The person behind a recorded actor: `user:<id>` for a person or an owned token,
    `token:<id>` for a token nobody owns (a person of its own, known to no one), and
    `system` for memdesk itself."""
    if kind == ActorKind.USER:
        return f"user:{actor_id}"
    if kind == ActorKind.AGENT:
        return f"user:{owner_id}" if owner_id is not None else f"token:{actor_id}"
    return ActorKind.SYSTEM.value


class AgentPrincipal:
    """What `request.user` is for a request authenticated with an agent token."""

    is_authenticated = True
    is_anonymous = False
    is_active = True
    is_staff = False
    is_superuser = False

    def __init__(self, token: AgentToken) -> None:
        self.token = token
        self.tenant: Tenant = token.tenant
        self.actor = Actor.for_token(token)
        self.pk = f"agent:{token.pk}"

    def get_username(self) -> str:
        return self.token.name

    def __str__(self) -> str:
        return f"agent {self.token.name}"
