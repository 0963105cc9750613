from __future__ import annotations

import pgtrigger
from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models.functions import Now

from common.append_only import Rewrite, only_rewrites


class Tenant(models.Model):
    slug = models.SlugField(max_length=63, unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(db_default=Now())

    def __str__(self) -> str:
        return self.slug


class Role(models.TextChoices):
    EDITOR = "editor", "Editor"
    ADMIN = "admin", "Admin"
    AUDITOR = "auditor", "Auditor"
    USER = "user", "End user"


class Membership(models.Model):
    """A person's role in a tenant. End users have role `user` and see only their subjects."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices)
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "user"], name="membership_unique_per_tenant"),
            models.CheckConstraint(
                condition=models.Q(role__in=Role.values), name="membership_role_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} @ {self.tenant} ({self.role})"


class SubjectOwnership(models.Model):
    """Links an end user to a subject (`kind:ref`, e.g. `user:alice`) they own.

    The subject is named by its key rather than a foreign key so that accounts
    does not depend on memory; the memory app resolves the key per tenant.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="owned_subjects"
    )
    subject_key = models.CharField(max_length=255)
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "user", "subject_key"], name="subject_ownership_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} owns {self.subject_key}"


class Capability(models.TextChoices):
    EVENTS_WRITE = "events:write"
    CLAIMS_WRITE = "claims:write"
    RECALL = "recall"
    RECEIPTS_WRITE = "receipts:write"
    CHECKPOINTS_WRITE = "checkpoints:write"
    # Reach every receipt and checkpoint of the tenant, not only the token's own:
    # for an agent that supervises others' effects. Never granted by default.
    RECEIPTS_OPERATE = "receipts:operate"
    SKILLS_READ = "skills:read"
    SKILLS_WRITE = "skills:write"
    EVALUATIONS_WRITE = "evaluations:write"


# What a token gets when nobody named its capabilities: everything an agent
# needs for its own work. Reaching other tokens' effects is always asked for.
DEFAULT_CAPABILITIES = frozenset(Capability.values) - {Capability.RECEIPTS_OPERATE}


class AuthorityCeiling(models.TextChoices):
    """The strongest authority a token's claims may carry (docs/trust.md).

    Ordered weakest first. An agent's own claim about its authority never
    raises it above this; only an admin sets it, when the token is made.
    """

    AGENT_INFERRED = "agent_inferred"
    TOOL_VERIFIED = "tool_verified"
    USER_EXPLICIT = "user_explicit"


@pgtrigger.register(
    # Whose word a token's actions are is fixed when it is made: moving a token to
    # another person would let one person's past actions count as someone else's.
    # The one change allowed is losing the owner when that person is deleted.
    pgtrigger.Protect(
        name="agent_token_owner_fixed",
        operation=pgtrigger.Update,
        condition=pgtrigger.Q(new__owner__isnull=False)
        & pgtrigger.Q(old__owner__df=pgtrigger.F("new__owner")),
    ),
)
class AgentToken(models.Model):
    """A bearer token for an agent, acting for its owner. Only a sha256 of the secret is stored.

    The owner is the person accountable for what the token does: separation of
    duties compares owners, so two tokens of one person are that one person.
    A token without an owner (made before owners were recorded, or whose owner
    was deleted) is nobody anyone can vouch for: it counts as a person of its
    own and never as a second pair of eyes (docs/people-and-duties.md).
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="agent_tokens")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="agent_tokens",
        help_text="The person the token acts for; a member of its tenant.",
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, help_text="First characters, to recognise a token.")
    secret_hash = models.CharField(max_length=64, unique=True)
    capabilities = ArrayField(models.CharField(max_length=32, choices=Capability.choices))
    allowed_subjects = ArrayField(
        models.CharField(max_length=255),
        default=list,
        blank=True,
        help_text="Subject keys this token may touch; empty means every subject of the tenant.",
    )
    max_authority = models.CharField(
        max_length=16,
        choices=AuthorityCeiling.choices,
        default=AuthorityCeiling.AGENT_INFERRED,
        db_default=AuthorityCeiling.AGENT_INFERRED,
        help_text="The strongest authority this token's claims may carry.",
    )
    created_at = models.DateTimeField(db_default=Now())
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "name"], name="agent_token_name_unique")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class ActorKind(models.TextChoices):
    USER = "user"
    AGENT = "agent"
    SYSTEM = "system"


# What a deletion may take out of an audit row (`memory.privacy.held_content` scrubs these).
AUDIT_SCRUB = Rewrite(stamp="scrubbed_at", clears=("reason", "data"))


@pgtrigger.register(
    pgtrigger.Protect(name="audit_no_delete", operation=pgtrigger.Delete),
    # Append-only; the one permitted change is a deletion scrubbing the words of
    # erased content out of `reason` and `data`, once, stamping `scrubbed_at`.
    only_rewrites(name="audit_only_scrub", rewrites=[AUDIT_SCRUB]),
)
class AuditEvent(models.Model):
    """Who did what to which object, when and why. The database refuses UPDATE and DELETE.

    Content that may later be erased (claim text, values) never goes in here:
    `data` holds identifiers and digests only.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    actor_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    actor_id = models.CharField(max_length=64, blank=True)
    actor_label = models.CharField(max_length=150, blank=True)
    verb = models.CharField(max_length=64)
    target_type = models.CharField(max_length=64)
    target_id = models.CharField(max_length=64)
    reason = models.CharField(max_length=500, blank=True)
    data = models.JSONField(default=dict, blank=True)
    at = models.DateTimeField(db_default=Now())
    scrubbed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["tenant", "target_type", "target_id", "at"]),
            models.Index(fields=["tenant", "-at"]),
        ]

    def __str__(self) -> str:
        return f"{self.actor_label} {self.verb} {self.target_type}:{self.target_id}"
