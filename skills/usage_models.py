"""What skills meet at run time: discovery vectors, the grants of each agent token, the
instances an instantiation check creates, and the use reports agents send back.

Beside ``skills.models`` (which imports this module, so Django finds the models) to
keep one idea per file: the package's lifecycle there, its use here.
"""

from __future__ import annotations

import uuid

import pgtrigger
from django.db import models
from django.db.models.functions import Now

from accounts.models import ActorKind, AgentToken, Tenant
from common.transitions import StateMachine


class SkillEmbedding(models.Model):
    """A published version's meaning for discovery, computed once at publish time.

    The document is the version's name, description, triggers and the start of its
    body (``skills.discovery.discovery_document``); the vector is little-endian
    float32, unit length, of the embedder named in ``model``.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    version = models.OneToOneField(
        "skills.SkillVersion", on_delete=models.CASCADE, related_name="embedding"
    )
    model = models.CharField(max_length=100)
    document_digest = models.CharField(max_length=64)
    packed = models.BinaryField()
    at = models.DateTimeField(db_default=Now())

    def __str__(self) -> str:
        return f"{self.version_id} ({self.model})"


class GrantKind(models.TextChoices):
    TOOL = "tool", "Tool"
    CAPABILITY = "capability", "Runtime capability"


class TokenGrant(models.Model):
    """A tool (``http_post``) or runtime capability (``network``) an admin granted one
    agent token. A skill needing what its token was not granted is neither found nor
    instantiated for it; revoking a grant invalidates the token's instances using it."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    token = models.ForeignKey(AgentToken, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=16, choices=GrantKind.choices)
    name = models.CharField(max_length=100)
    actor_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    actor_id = models.CharField(max_length=64, blank=True)
    actor_label = models.CharField(max_length=150, blank=True)
    at = models.DateTimeField(db_default=Now())

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["token", "kind", "name"], name="token_grant_once"),
            models.CheckConstraint(
                condition=models.Q(kind__in=GrantKind.values), name="token_grant_kind_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.token_id}: {self.kind} {self.name}"


class InstanceState(models.TextChoices):
    READY = "ready", "Ready"
    BLOCKED = "blocked", "Blocked"
    # A credential slot's secret, a tool or grant, or the production label changed
    # after the check: the plan no longer describes what would run.
    INVALIDATED = "invalidated", "Invalidated"


_S = InstanceState
INSTANCE_TRANSITIONS: dict[str, frozenset[str]] = {
    _S.READY: frozenset({_S.INVALIDATED}),
    _S.BLOCKED: frozenset({_S.INVALIDATED}),
    _S.INVALIDATED: frozenset(),
}
# Invalidations come in batches, recorded by one audit row per batch
# (`instances_invalidate`), so the machine writes none per row.
INSTANCE_MACHINE = StateMachine.plain(
    label="skill instance", table=INSTANCE_TRANSITIONS, column="state"
)


@pgtrigger.register(
    pgtrigger.Protect(name="skill_instance_kept", operation=pgtrigger.Delete),
    INSTANCE_MACHINE.trigger("skill_instance_state_transition"),
)
class SkillInstance(models.Model):
    """One instantiation check of a version by one caller: the plan it ran against.

    Resolve and body serve a version only to a caller whose latest instance of it is
    ``ready`` (or who overrides with a reason, audited). Bindings hold secret names and
    inputs hold only their names; values never reach this table.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    version = models.ForeignKey(
        "skills.SkillVersion", on_delete=models.PROTECT, related_name="instances"
    )
    caller_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    caller_id = models.CharField(max_length=64, blank=True)
    caller_label = models.CharField(max_length=150, blank=True)
    state = models.CharField(max_length=16, choices=InstanceState.choices)
    reasons = models.JSONField(default=list, blank=True)
    bindings = models.JSONField(default=dict, blank=True)
    input_names = models.JSONField(default=list, blank=True)
    tools = models.JSONField(default=list, blank=True)
    capabilities = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(db_default=Now())
    invalidated_at = models.DateTimeField(null=True, blank=True)
    invalidated_reason = models.CharField(max_length=1000, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(state__in=InstanceState.values),
                name="skill_instance_state_valid",
            ),
            models.CheckConstraint(
                condition=~models.Q(state="invalidated")
                | (
                    models.Q(invalidated_at__isnull=False)
                    & models.Q(invalidated_reason__regex=r"\S")
                ),
                name="skill_instance_invalidated_has_reason",
            ),
        ]
        indexes = [
            models.Index(fields=["tenant", "version", "caller_kind", "caller_id", "-created_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.caller_label} on {self.version_id}: {self.state}"


class UseOutcome(models.TextChoices):
    SUCCESS = "success", "Success"
    FAILURE = "failure", "Failure"


@pgtrigger.register(
    pgtrigger.Protect(
        name="skill_use_report_append_only", operation=pgtrigger.Update | pgtrigger.Delete
    )
)
class SkillUseReport(models.Model):
    """An agent's word on how a loaded skill did on one task of a type.

    ``without_skill`` is how the same kind of task went without it, when the agent
    knows (its no-skill path): a failure where that succeeded, or more steps, is
    negative transfer, and discovery ranks the skill lower for that task type.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    version = models.ForeignKey(
        "skills.SkillVersion", on_delete=models.PROTECT, related_name="use_reports"
    )
    task_type = models.CharField(max_length=100)
    outcome = models.CharField(max_length=16, choices=UseOutcome.choices)
    without_skill = models.CharField(max_length=16, choices=UseOutcome.choices, blank=True)
    steps = models.PositiveIntegerField(null=True, blank=True)
    steps_without_skill = models.PositiveIntegerField(null=True, blank=True)
    negative_transfer = models.BooleanField()
    actor_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    actor_id = models.CharField(max_length=64, blank=True)
    actor_label = models.CharField(max_length=150, blank=True)
    at = models.DateTimeField(db_default=Now())

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(outcome__in=UseOutcome.values),
                name="skill_use_report_outcome_valid",
            ),
        ]
        indexes = [models.Index(fields=["tenant", "task_type", "version"])]

    def __str__(self) -> str:
        return f"{self.version_id} on {self.task_type}: {self.outcome}"
