from __future__ import annotations

import pgtrigger
from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import F
from django.db.models.functions import Now

from accounts.models import ActorKind, Tenant
from common.append_only import Rewrite, only_rewrites
from common.transitions import ANY_ROLE, StateMachine


class Queue(models.TextChoices):
    CANDIDATES = "candidates", "Candidates"
    CONFLICTS = "conflicts", "Conflicts"
    MANUAL_REVIEW = "manual_review", "Manual review"
    SKILL_PUBLICATION = "skill_publication", "Skill publication"
    DELETIONS = "deletions", "Deletions"
    STALE = "stale", "Stale"
    APPROVALS = "approvals", "Approvals"


class ItemStatus(models.TextChoices):
    OPEN = "open"
    CLAIMED = "claimed"
    DECIDED = "decided"
    CANCELLED = "cancelled"


OPEN_STATUSES = (ItemStatus.OPEN, ItemStatus.CLAIMED)

_I = ItemStatus
_ANY = frozenset({ANY_ROLE})
# The role of the one move back: an undo reopens its decided item, held by the person
# undoing (`review_undo`). Raw SQL without the role cannot reopen a decided item.
ITEM_UNDO_ROLE = "undo"
# The review item state machine, and the only place it is written down. A claimed
# item is claimed again (the lease renewed or taken over) without moving; an item
# whose target went away is cancelled whoever holds it. Decisions are the record of
# its moves, so the machine writes no audit rows of its own.
REVIEW_ITEM_MACHINE = StateMachine(
    label="review item",
    moves={
        _I.OPEN: {_I.CLAIMED: _ANY, _I.DECIDED: _ANY, _I.CANCELLED: _ANY},
        _I.CLAIMED: {_I.DECIDED: _ANY, _I.CANCELLED: _ANY},
        _I.DECIDED: {_I.CLAIMED: frozenset({ITEM_UNDO_ROLE})},
    },
    gated_role=ITEM_UNDO_ROLE,
)


@pgtrigger.register(REVIEW_ITEM_MACHINE.trigger("review_item_status_transition"))
class ReviewItem(models.Model):
    """Something a person must look at. Queues know targets only by type and id."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    queue = models.CharField(max_length=32, choices=Queue.choices)
    target_type = models.CharField(max_length=32)
    target_id = models.CharField(max_length=64)
    # The target's state when the item opened; a decision on a target that has
    # changed since is refused (`target_changed`).
    target_version = models.CharField(max_length=80, blank=True)
    status = models.CharField(max_length=16, choices=ItemStatus.choices, default=ItemStatus.OPEN)
    priority = models.SmallIntegerField(default=0)
    subject_key = models.CharField(max_length=255, blank=True)
    # What the item is about within its subject (a predicate, an operation, a
    # skill slug): set by the opening app so queues can filter on it.
    topic = models.CharField(max_length=200, blank=True)
    agent_label = models.CharField(max_length=100, blank=True)
    reason_codes = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    created_at = models.DateTimeField(db_default=Now())
    claimed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "target_type", "target_id", "queue"],
                condition=models.Q(status__in=["open", "claimed"]),
                name="review_one_open_item_per_target",
            ),
            models.CheckConstraint(
                condition=models.Q(status__in=ItemStatus.values), name="review_item_status_valid"
            ),
            models.CheckConstraint(
                condition=~models.Q(status="claimed")
                | models.Q(claimed_by__isnull=False, lease_expires_at__isnull=False),
                name="review_claimed_has_lease",
            ),
        ]
        indexes = [
            models.Index(
                fields=["tenant", "queue", "created_at", "id"],
                condition=models.Q(status__in=["open", "claimed"]),
                name="review_open_by_age",
            ),
            # The console's "priority" sort walks (-priority, created_at, id)
            # ascending, so one row-value keyset condition serves it.
            models.Index(
                F("tenant"),
                F("queue"),
                F("priority") * -1,
                F("created_at"),
                F("id"),
                condition=models.Q(status__in=["open", "claimed"]),
                name="review_open_by_priority",
            ),
            models.Index(fields=["tenant", "target_type", "target_id"]),
        ]

    def __str__(self) -> str:
        return f"{self.queue} {self.target_type}:{self.target_id} ({self.status})"


# What a deletion may take out of a decision (`memory.privacy.held_content` scrubs these).
DECISION_SCRUB = Rewrite(stamp="scrubbed_at", clears=("note", "payload", "undo_state"))


@pgtrigger.register(
    pgtrigger.Protect(name="decision_no_delete", operation=pgtrigger.Delete),
    # Append-only; the one permitted change is a deletion scrubbing the words of
    # erased content out of `note`, `payload` and `undo_state`, once, stamping `scrubbed_at`.
    only_rewrites(name="decision_only_scrub", rewrites=[DECISION_SCRUB]),
)
class Decision(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    item = models.ForeignKey(ReviewItem, on_delete=models.PROTECT, related_name="decisions")
    verdict = models.CharField(max_length=32)
    reason_code = models.CharField(max_length=32, blank=True)
    note = models.TextField(blank=True)
    payload = models.JSONField(default=dict, blank=True)
    actor_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    actor_id = models.CharField(max_length=64, blank=True)
    actor_label = models.CharField(max_length=150, blank=True)
    at = models.DateTimeField(db_default=Now())
    scrubbed_at = models.DateTimeField(null=True, blank=True)
    # What an undo needs, from the queue's handler: the target's state just before
    # (`before`, restored by an undo) and just after the decision (`after`, which
    # must still hold for an undo to go ahead). Empty: this decision cannot be undone.
    undo_state = models.JSONField(default=dict, blank=True)

    class Meta:
        indexes = [
            # Every queue page asks for the person's latest decision still inside its
            # undo window: an index walk, not a scan of every decision ever taken.
            models.Index(
                fields=["tenant", "actor_kind", "actor_id", "-at"], name="decision_by_actor_recent"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.verdict} on {self.item_id} by {self.actor_label}"


@pgtrigger.register(
    pgtrigger.Protect(
        name="decision_undo_append_only", operation=pgtrigger.Update | pgtrigger.Delete
    )
)
class DecisionUndo(models.Model):
    """A decision taken back within its undo window. The decision row stays as it was;
    this row says it no longer holds. One per decision: a second undo is refused."""

    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    decision = models.OneToOneField(Decision, on_delete=models.PROTECT, related_name="undo")
    actor_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    actor_id = models.CharField(max_length=64, blank=True)
    actor_label = models.CharField(max_length=150, blank=True)
    at = models.DateTimeField(db_default=Now())

    def __str__(self) -> str:
        return f"undo of decision {self.decision_id} by {self.actor_label}"


class SavedFilter(models.Model):
    """A person's named view of a queue: its filters and sort, as the query string the
    queue page reads, so the saved view is also a link anyone on the tenant can open."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    queue = models.CharField(max_length=32, choices=Queue.choices)
    name = models.CharField(max_length=80)
    query = models.CharField(max_length=1000, blank=True)
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "owner", "queue", "name"], name="review_saved_filter_unique_name"
            ),
            models.CheckConstraint(condition=~models.Q(name=""), name="review_saved_filter_named"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.queue})"
