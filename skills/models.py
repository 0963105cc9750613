"""Skills: content-addressed versions, their evaluation matrix, labels and pins.

A ``SkillVersion`` is the parsed content of one uploaded package and never
changes after upload; only its lifecycle columns move. The ``production``
label is a pointer (``SkillLabel``) whose every move is an append-only
``LabelMove``. The database backs the rules the services enforce, so a bug or
a hand-written UPDATE cannot rewrite history or content.
"""

from __future__ import annotations

from typing import Any

import pgtrigger
from django.db import models
from django.db.models.functions import Now

from accounts.models import ActorKind, Tenant
from common.transitions import StateMachine

SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
PRODUCTION = "production"


class VersionStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    IN_REVIEW = "in_review", "In review"
    APPROVED = "approved", "Approved"
    PUBLISHED = "published", "Published"
    DEPRECATED = "deprecated", "Deprecated"
    REVOKED = "revoked", "Revoked"
    # Turned down in review. Content is immutable and content-addressed, so a
    # rejected package stays rejected; a fix is a new upload with a new hash.
    REJECTED = "rejected", "Rejected"
    # A tool it needs was retired: marked, never patched over
    # with a compatibility branch. A version for the new tool is a new upload.
    INCOMPATIBLE = "incompatible", "Incompatible"


_V = VersionStatus

# The version lifecycle (docs/design.md) and the only place it is
# written down: from-status → the statuses it may move to. The services'
# guard, the API's `allowed_next` and the database trigger below all read it.
VERSION_TRANSITIONS: dict[str, frozenset[str]] = {
    _V.DRAFT: frozenset({_V.IN_REVIEW, _V.REVOKED, _V.INCOMPATIBLE}),
    _V.IN_REVIEW: frozenset({_V.APPROVED, _V.REJECTED, _V.REVOKED, _V.INCOMPATIBLE}),
    _V.APPROVED: frozenset({_V.PUBLISHED, _V.REVOKED, _V.INCOMPATIBLE}),
    _V.PUBLISHED: frozenset({_V.DEPRECATED, _V.REVOKED, _V.INCOMPATIBLE}),
    _V.DEPRECATED: frozenset({_V.REVOKED, _V.INCOMPATIBLE}),
    _V.INCOMPATIBLE: frozenset({_V.REVOKED}),
    _V.REJECTED: frozenset(),
    _V.REVOKED: frozenset(),
}
# Where a retired tool moves a version from: everything not already final.
INCOMPATIBLE_FROM = frozenset(
    status for status, targets in VERSION_TRANSITIONS.items() if _V.INCOMPATIBLE in targets
)


# The services audit each move with their own verbs (`skill.version.*`); a version that
# leaves review for good closes its open publication review.
VERSION_MACHINE = StateMachine.plain(
    label="skill version",
    table=VERSION_TRANSITIONS,
    review_target="skill_version",
    closes_reviews_at=frozenset({_V.REVOKED, _V.INCOMPATIBLE}),
)


def allowed_version_targets(status: str) -> list[str]:
    """The statuses a version in `status` may move to, sorted."""
    return VERSION_MACHINE.targets(status)


class EvaluationCategory(models.TextChoices):
    """The six categories of a skill's regression matrix (docs/skills.md)."""

    NORMAL = "normal", "Normal path"
    MISSING_INPUT = "missing_input", "Missing input"
    ENVIRONMENT_FAILURE = "environment_failure", "Environment failure"
    PERMISSION_DENIED = "permission_denied", "Permission denied"
    INJECTED_CONTENT = "injected_content", "Injected content"
    VERSION_INCOMPATIBLE = "version_incompatible", "Version incompatible"


class EvaluationKind(models.TextChoices):
    """A regression run counts in the matrix; the two controls are recorded and shown."""

    REGRESSION = "regression", "Regression"
    UNSEEN_TASK = "unseen_task", "Unseen task"
    PAIRED_COMPOSITION = "paired_composition", "Paired composition"


class LabelMoveCause(models.TextChoices):
    PUBLISH = "publish", "Publish"
    ROLLBACK = "rollback", "Rollback"
    REVOKE = "revoke", "Revoke"


class Skill(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    slug = models.CharField(max_length=64)
    name = models.CharField(max_length=200)
    created_by_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    created_by_id = models.CharField(max_length=64, blank=True)
    created_by_label = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "slug"], name="skill_slug_unique_per_tenant"),
            models.CheckConstraint(
                condition=models.Q(slug__regex=SLUG_PATTERN), name="skill_slug_format"
            ),
        ]

    def __str__(self) -> str:
        return self.slug


def _scrub_stamped() -> pgtrigger.Q:
    """An UPDATE that moves `scrubbed_at` on: a deletion taking its words out."""
    return pgtrigger.Q(new__scrubbed_at__isnull=False) & (
        pgtrigger.Q(old__scrubbed_at__isnull=True)
        | pgtrigger.Q(new__scrubbed_at__gt=pgtrigger.F("old__scrubbed_at"))
    )


@pgtrigger.register(
    # Content-addressed: the columns that make up the package never change,
    # not even while the version is a draft, or content_hash would lie.
    pgtrigger.Protect(
        name="skill_version_content_immutable",
        operation=pgtrigger.Update,
        condition=pgtrigger.AnyChange(
            "tenant",
            "skill",
            "number",
            "content_hash",
            "author_kind",
            "author_id",
            "author_label",
            "created_at",
        ),
    ),
    # The words of the package change only when a deletion scrubs them (the version is
    # revoked in the same transaction; its hash keeps naming what was approved).
    pgtrigger.Protect(
        name="skill_version_words_only_scrubbed",
        operation=pgtrigger.Update,
        condition=(
            pgtrigger.Q(old__manifest__df=pgtrigger.F("new__manifest"))
            | pgtrigger.Q(old__body__df=pgtrigger.F("new__body"))
            | pgtrigger.Q(old__scrubbed_at__df=pgtrigger.F("new__scrubbed_at"))
        )
        & ~_scrub_stamped(),
    ),
    pgtrigger.Protect(name="skill_version_kept", operation=pgtrigger.Delete),
    # Only the table's moves; revoke is final (nothing leaves `revoked`), so
    # nothing may bring a revoked version back into use.
    # Generated from the table so a hand-written UPDATE cannot skip review or
    # bring a version back.
    VERSION_MACHINE.trigger("skill_version_status_transition"),
    # Separation of duties in the database too: nothing moves a version to approved
    # without as many approvals, one per person, as `approvals_required` asks for
    # (two when the approver signed off on capability or risk changes).
    pgtrigger.Trigger(
        name="skill_version_approved_by_enough_people",
        operation=pgtrigger.Update,
        when=pgtrigger.Before,
        condition=pgtrigger.Q(new__status="approved")
        & pgtrigger.Q(old__status__df=pgtrigger.F("new__status")),
        func="""
            IF (SELECT count(*) FROM skills_skillapproval WHERE version_id = NEW.id)
               < 1 + (jsonb_array_length(NEW.approved_changes) > 0)::int
            THEN
                RAISE EXCEPTION 'skill version % needs more approvals by different people',
                    NEW.id USING ERRCODE = 'check_violation';
            END IF;
            RETURN NEW;
        """,
    ),
)
class SkillVersion(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    skill = models.ForeignKey(Skill, on_delete=models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField()
    content_hash = models.CharField(max_length=71)
    manifest = models.JSONField()
    body = models.TextField(blank=True)
    status = models.CharField(
        max_length=16, choices=VersionStatus.choices, default=VersionStatus.DRAFT
    )
    author_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    author_id = models.CharField(max_length=64, blank=True)
    author_label = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(db_default=Now())
    submitted_at = models.DateTimeField(null=True, blank=True)
    approved_at = models.DateTimeField(null=True, blank=True)
    approved_by_kind = models.CharField(max_length=8, choices=ActorKind.choices, blank=True)
    approved_by_id = models.CharField(max_length=64, blank=True)
    approved_by_label = models.CharField(max_length=150, blank=True)
    # The capability and risk changes the approver signed off on (manifest_diff
    # entries against the production version at approval time).
    approved_changes = models.JSONField(default=list, blank=True)
    rejected_at = models.DateTimeField(null=True, blank=True)
    reject_reason = models.CharField(max_length=1000, blank=True)
    published_at = models.DateTimeField(null=True, blank=True)
    deprecated_at = models.DateTimeField(null=True, blank=True)
    deprecate_reason = models.CharField(max_length=1000, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoke_reason = models.CharField(max_length=1000, blank=True)
    incompatible_at = models.DateTimeField(null=True, blank=True)
    incompatible_reason = models.CharField(max_length=1000, blank=True)
    # When a deletion last took a forgotten memory's words out of its body and manifest.
    scrubbed_at = models.DateTimeField(null=True, blank=True)

    # Not a column: the console's skill page counts the pins of the last day for its table.
    instances_last_24h: int

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "skill", "number"], name="skill_version_number_unique"
            ),
            models.UniqueConstraint(
                fields=["tenant", "skill", "content_hash"], name="skill_version_hash_unique"
            ),
            models.CheckConstraint(
                condition=models.Q(status__in=VersionStatus.values),
                name="skill_version_status_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(content_hash__regex=r"^sha256:[0-9a-f]{64}$"),
                name="skill_version_hash_format",
            ),
            # Four eyes, in the database too: nobody approves their own version.
            models.CheckConstraint(
                condition=models.Q(approved_by_kind="")
                | ~models.Q(
                    approved_by_kind=models.F("author_kind"),
                    approved_by_id=models.F("author_id"),
                ),
                name="skill_version_approver_not_author",
            ),
            models.CheckConstraint(
                condition=~models.Q(status__in=["approved", "published", "deprecated"])
                | models.Q(approved_at__isnull=False),
                name="skill_version_approved_has_approver",
            ),
            models.CheckConstraint(
                condition=~models.Q(status__in=["published", "deprecated"])
                | models.Q(published_at__isnull=False),
                name="skill_version_published_has_time",
            ),
            models.CheckConstraint(
                condition=~models.Q(status="revoked")
                | (models.Q(revoked_at__isnull=False) & models.Q(revoke_reason__regex=r"\S")),
                name="skill_version_revoked_has_reason",
            ),
            models.CheckConstraint(
                condition=~models.Q(status="incompatible")
                | (
                    models.Q(incompatible_at__isnull=False)
                    & models.Q(incompatible_reason__regex=r"\S")
                ),
                name="skill_version_incompatible_has_reason",
            ),
        ]
        indexes = [
            models.Index(fields=["tenant", "skill", "status", "-number"]),
        ]

    def __str__(self) -> str:
        return f"{self.skill_id} v{self.number} ({self.status})"

    @property
    def risk(self) -> str:
        return self.manifest.get("risk") or "low"

    @property
    def capabilities(self) -> list[str]:
        return list(self.manifest.get("capabilities") or [])


def approvals_required(changes: list[dict[str, Any]]) -> int:
    """How many different people must approve a version: two when it widens what the
    skill may do (`changes`: capabilities added, risk raised to high), else one."""
    return 2 if changes else 1


@pgtrigger.register(
    pgtrigger.Protect(
        name="skill_approval_append_only", operation=pgtrigger.Update | pgtrigger.Delete
    )
)
class SkillApproval(models.Model):
    """One person's approval of a version; two for a capability or risk increase.

    ``person`` is who answers for it (``Actor.person``): the database keeps one
    approval per person and version, so a second approval always is a second
    person, whichever session or token they came through.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    version = models.ForeignKey(SkillVersion, on_delete=models.PROTECT, related_name="approvals")
    person = models.CharField(max_length=80)
    actor_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    actor_id = models.CharField(max_length=64, blank=True)
    actor_label = models.CharField(max_length=150, blank=True)
    reason = models.CharField(max_length=1000, blank=True)
    at = models.DateTimeField(db_default=Now())

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["version", "person"], name="skill_approval_per_person"),
        ]

    def __str__(self) -> str:
        return f"{self.actor_label} approved {self.version_id}"


@pgtrigger.register(
    pgtrigger.Protect(name="skill_file_no_delete", operation=pgtrigger.Delete),
    # The one change a stored file admits: a deletion taking a forgotten memory's words
    # out of its content, which moves `scrubbed_at` on (each deletion scrubs once). The
    # version holding it is revoked in the same transaction.
    pgtrigger.Protect(
        name="skill_file_only_scrub",
        operation=pgtrigger.Update,
        condition=~_scrub_stamped()
        | pgtrigger.Q(old__tenant__df=pgtrigger.F("new__tenant"))
        | pgtrigger.Q(old__version__df=pgtrigger.F("new__version"))
        | pgtrigger.Q(old__path__df=pgtrigger.F("new__path")),
    ),
)
class SkillFile(models.Model):
    """One file of a version's package, stored whole; the zip itself is not kept."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    version = models.ForeignKey(SkillVersion, on_delete=models.PROTECT, related_name="files")
    path = models.CharField(max_length=1000)
    sha256 = models.CharField(max_length=64)
    size = models.PositiveIntegerField()
    content = models.BinaryField()
    scrubbed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "version", "path"], name="skill_file_path_unique"
            ),
        ]

    def __str__(self) -> str:
        return self.path


@pgtrigger.register(
    pgtrigger.Protect(
        name="evaluation_run_append_only", operation=pgtrigger.Update | pgtrigger.Delete
    )
)
class EvaluationRun(models.Model):
    """One regression result. It counts only for the content hash it names."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    version = models.ForeignKey(SkillVersion, on_delete=models.PROTECT, related_name="evaluations")
    content_hash = models.CharField(max_length=71)
    category = models.CharField(max_length=32, choices=EvaluationCategory.choices)
    kind = models.CharField(
        max_length=24, choices=EvaluationKind.choices, default="regression", db_default="regression"
    )
    # A paired-composition run: the other skill's version it ran together with.
    paired_skill = models.CharField(max_length=64, blank=True)
    paired_number = models.PositiveIntegerField(null=True, blank=True)
    passed = models.BooleanField()
    details = models.JSONField(default=dict, blank=True)
    environment = models.JSONField(default=dict, blank=True)
    actor_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    actor_id = models.CharField(max_length=64, blank=True)
    actor_label = models.CharField(max_length=150, blank=True)
    at = models.DateTimeField(db_default=Now())
    # Posted by someone other than the version's author. Runs recorded before
    # memdesk checked this are false and never count.
    independent = models.BooleanField(default=False, db_default=False)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(category__in=EvaluationCategory.values),
                name="evaluation_category_valid",
            ),
        ]
        indexes = [
            models.Index(fields=["tenant", "version", "content_hash", "category", "-at"]),
        ]

    def __str__(self) -> str:
        return f"{self.category} {'passed' if self.passed else 'failed'} on {self.content_hash}"


class SkillLabel(models.Model):
    """A named pointer to a version; ``production`` is what a label resolve loads."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    skill = models.ForeignKey(Skill, on_delete=models.PROTECT, related_name="labels")
    name = models.CharField(max_length=50)
    # Null once revoke left no good version to fall back to.
    version = models.ForeignKey(
        SkillVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    moved_at = models.DateTimeField(db_default=Now())

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "skill", "name"], name="skill_label_unique_per_skill"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.skill_id}:{self.name}"


@pgtrigger.register(
    pgtrigger.Protect(name="label_move_append_only", operation=pgtrigger.Update | pgtrigger.Delete)
)
class LabelMove(models.Model):
    """Who moved a label, when, from which version to which, and why."""

    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    skill = models.ForeignKey(Skill, on_delete=models.PROTECT, related_name="label_moves")
    label = models.CharField(max_length=50)
    from_version = models.ForeignKey(
        SkillVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    to_version = models.ForeignKey(
        SkillVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    cause = models.CharField(max_length=16, choices=LabelMoveCause.choices)
    actor_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    actor_id = models.CharField(max_length=64, blank=True)
    actor_label = models.CharField(max_length=150, blank=True)
    reason = models.CharField(max_length=1000)
    at = models.DateTimeField(db_default=Now())

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(reason__regex=r"\S"), name="label_move_reason_required"
            ),
            models.CheckConstraint(
                condition=models.Q(cause__in=LabelMoveCause.values),
                name="label_move_cause_valid",
            ),
        ]
        indexes = [models.Index(fields=["tenant", "skill", "label", "-at"])]

    def __str__(self) -> str:
        return f"{self.label}: {self.from_version_id} → {self.to_version_id}"


class SkillPin(models.Model):
    """An instance (``X-Skill-Instance``) that loaded a version, and when it last did."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    skill = models.ForeignKey(Skill, on_delete=models.CASCADE, related_name="pins")
    version = models.ForeignKey(SkillVersion, on_delete=models.CASCADE, related_name="pins")
    instance = models.CharField(max_length=200)
    first_seen_at = models.DateTimeField(db_default=Now())
    last_seen_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "version", "instance"], name="skill_pin_unique"
            ),
        ]
        indexes = [models.Index(fields=["tenant", "version", "-last_seen_at"])]

    def __str__(self) -> str:
        return f"{self.instance} on {self.version_id}"


class LoadLevel(models.IntegerChoices):
    """Progressive disclosure (Agent Skills): what an agent read of a version."""

    CATALOG = 1, "Catalog entry"
    BODY = 2, "Body"
    FILE = 3, "File"


class SkillLoad(models.Model):
    """How often one agent (or person) loaded one version at one level; one row each."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    version = models.ForeignKey(SkillVersion, on_delete=models.CASCADE, related_name="loads")
    level = models.PositiveSmallIntegerField(choices=LoadLevel.choices)
    loader_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    loader_id = models.CharField(max_length=64, blank=True)
    loader_label = models.CharField(max_length=150, blank=True)
    count = models.PositiveBigIntegerField(default=1)
    first_at = models.DateTimeField(db_default=Now())
    last_at = models.DateTimeField(db_default=Now())

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "version", "level", "loader_kind", "loader_id"],
                name="skill_load_one_row_per_loader",
            ),
            models.CheckConstraint(
                condition=models.Q(level__in=LoadLevel.values), name="skill_load_level_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.loader_label} loaded {self.version_id} at level {self.level} x{self.count}"


@pgtrigger.register(
    pgtrigger.Protect(name="retired_tool_kept", operation=pgtrigger.Update | pgtrigger.Delete)
)
class RetiredTool(models.Model):
    """A tool the tenant's agents no longer have; versions needing it are incompatible."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=100)
    reason = models.CharField(max_length=1000)
    actor_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    actor_id = models.CharField(max_length=64, blank=True)
    actor_label = models.CharField(max_length=150, blank=True)
    at = models.DateTimeField(db_default=Now())

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "name"], name="retired_tool_once"),
            models.CheckConstraint(
                condition=models.Q(reason__regex=r"\S"), name="retired_tool_reason_required"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class DraftSource(models.Model):
    """Lineage: an experience claim a drafted version was built from (docs/skills.md).

    The claim is named by id only: memory owns claims and never learns about
    skills. When a deletion erases or invalidates the claim, memory's
    ``claims_forgotten`` signal stamps ``source_deleted_at`` here, and the
    version can no longer move towards production.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    version = models.ForeignKey(SkillVersion, on_delete=models.PROTECT, related_name="sources")
    claim_id = models.UUIDField()
    source_deleted_at = models.DateTimeField(null=True, blank=True)
    deletion_id = models.UUIDField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "version", "claim_id"], name="draft_source_once"
            ),
        ]
        indexes = [models.Index(fields=["tenant", "claim_id"])]

    def __str__(self) -> str:
        return f"{self.version_id} from claim {self.claim_id}"


# Django registers an app's models from its models module; these live beside it.
from skills.evaluation_models import EvaluationCase as EvaluationCase  # noqa: E402
from skills.evaluation_models import EvaluationCheck as EvaluationCheck  # noqa: E402
from skills.usage_models import SkillEmbedding as SkillEmbedding  # noqa: E402
from skills.usage_models import SkillInstance as SkillInstance  # noqa: E402
from skills.usage_models import SkillUseReport as SkillUseReport  # noqa: E402
from skills.usage_models import TokenGrant as TokenGrant  # noqa: E402
