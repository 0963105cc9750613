from __future__ import annotations

import uuid

import pgtrigger
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models.functions import Now

from accounts.models import Tenant
from common.transitions import StateMachine
from memory.claims.models.ledger import Event, Sensitivity, Subject


class ClaimKind(models.TextChoices):
    FACT = "fact"
    PREFERENCE = "preference"
    EXPERIENCE = "experience"
    SUMMARY = "summary"


class Authority(models.TextChoices):
    """Ordered from most to least trusted; `AUTHORITY_RANK` makes the order explicit."""

    USER_EXPLICIT = "user_explicit"
    TOOL_VERIFIED = "tool_verified"
    AGENT_INFERRED = "agent_inferred"
    REPORTED = "reported"


AUTHORITY_RANK = {
    Authority.USER_EXPLICIT: 4,
    Authority.TOOL_VERIFIED: 3,
    Authority.AGENT_INFERRED: 2,
    Authority.REPORTED: 1,
}


class Basis(models.TextChoices):
    VERIFIED = "verified"
    REPORTED = "reported"
    INFERENCE = "inference"


class ClaimStatus(models.TextChoices):
    CANDIDATE = "candidate"
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    INVALIDATED = "invalidated"
    CONFLICTED = "conflicted"
    QUARANTINED = "quarantined"
    REJECTED = "rejected"
    # Kept and restorable, never recalled: an editor took it out of use.
    ARCHIVED = "archived"
    ERASED = "erased"


class ClaimRole(models.TextChoices):
    """Who moves a claim: the writer through the gate or the claims API (an agent's
    token or an editor), a review decision, the person the memory is about,
    consolidation, or a deletion."""

    WRITER = "writer"
    REVIEWER = "reviewer"
    USER = "user"
    WORKER = "worker"
    DELETION = "deletion"
    # A review decision taken back within its undo window (`REVIEW_UNDO_SECONDS`):
    # only the inverse of what that decision moved, and only while nothing else
    # touched the claims since (reviews.services.review_undo checks both).
    UNDO = "undo"


_C = ClaimStatus
_W = ClaimRole

# A deletion (or retention) may erase a claim in any state; nothing comes back.
_ERASE: dict[str, frozenset[str]] = {_C.ERASED: frozenset({_W.DELETION})}

# The claim state machine (docs/design.md) and the only place it is written
# down: from-state → {to-state: roles allowed to make that move}. The service
# guard (`claim_move`), the bulk SQL moves (`claim_sources_for`) and the
# database trigger on `Claim` all read it. Moves the design's diagram does not
# draw are marked "beyond the diagram" with the reason they are right.
CLAIM_TRANSITIONS: dict[str, dict[str, frozenset[str]]] = {
    _C.CANDIDATE: {
        _C.ACTIVE: frozenset({_W.REVIEWER}),
        _C.QUARANTINED: frozenset({_W.WRITER}),
        # Rejected on review, or folded into a claim that already says it
        # (a reviewer's merge, consolidation's duplicate pass).
        _C.REJECTED: frozenset({_W.REVIEWER, _W.WORKER}),
        # Beyond the diagram: candidates that contradict an active claim or each
        # other are turned into a conflict by consolidation, so approving them
        # one by one cannot settle the contradiction by arrival order.
        _C.CONFLICTED: frozenset({_W.WORKER}),
        # Beyond the diagram: the user's own correction replaces what is pending.
        _C.SUPERSEDED: frozenset({_W.USER}),
        # Beyond the diagram: a pending claim stops being true like an active
        # one does (the writer retracts it, it expires, its source changed or
        # was deleted); it was not wrong when written, so not rejected.
        _C.INVALIDATED: frozenset({_W.WRITER, _W.WORKER, _W.DELETION}),
        **_ERASE,
    },
    _C.QUARANTINED: {
        _C.ACTIVE: frozenset({_W.REVIEWER}),
        _C.REJECTED: frozenset({_W.REVIEWER}),
        # Beyond the diagram: the user's correction, and expiry or a changed or
        # deleted source, end a quarantined claim as they end a candidate.
        _C.SUPERSEDED: frozenset({_W.USER}),
        _C.INVALIDATED: frozenset({_W.WORKER, _W.DELETION}),
        **_ERASE,
    },
    _C.ACTIVE: {
        # Beyond the diagram, a stay: a conflict settled for the standing side
        # (or kept on both sides with narrower scopes) leaves it active, its
        # conflict links cleared and the decision audited like any move.
        _C.ACTIVE: frozenset({_W.REVIEWER, _W.WORKER}),
        # A newer revision through the gate or the user's correction, or another
        # claim on the identity approved or winning a conflict.
        _C.SUPERSEDED: frozenset({_W.WRITER, _W.REVIEWER, _W.WORKER, _W.USER}),
        # Beyond the diagram, undo: a conflict's resolution taken back puts the
        # standing side back into the contest.
        _C.CONFLICTED: frozenset({_W.WRITER, _W.UNDO}),
        _C.INVALIDATED: frozenset({_W.WRITER, _W.REVIEWER, _W.WORKER, _W.DELETION}),
        # Beyond the diagram: resolving a conflict, a reviewer may find the
        # standing side was never true; superseded would say it once was.
        _C.REJECTED: frozenset({_W.REVIEWER}),
        # Beyond the diagram: an editor archives a claim nobody needs any more; it
        # stays, out of recall and hot memory, until restored or erased.
        _C.ARCHIVED: frozenset({_W.REVIEWER}),
        # Beyond the diagram, undo: an approval taken back; the memory waits again,
        # as a candidate or, if it came from quarantine, quarantined.
        _C.CANDIDATE: frozenset({_W.UNDO}),
        _C.QUARANTINED: frozenset({_W.UNDO}),
        **_ERASE,
    },
    _C.ARCHIVED: {
        # Restored by an editor (when no other claim has taken its identity).
        _C.ACTIVE: frozenset({_W.REVIEWER}),
        # The person it is about corrects it: their word replaces it.
        _C.SUPERSEDED: frozenset({_W.USER}),
        **_ERASE,
    },
    _C.CONFLICTED: {
        _C.ACTIVE: frozenset({_W.REVIEWER, _W.WORKER}),
        _C.SUPERSEDED: frozenset({_W.REVIEWER, _W.WORKER, _W.USER}),
        # Beyond the diagram: a reviewer rejects a side that was never true, and
        # a contested claim can stop being true before anyone settles it.
        _C.REJECTED: frozenset({_W.REVIEWER}),
        _C.INVALIDATED: frozenset({_W.WRITER, _W.WORKER, _W.DELETION}),
        **_ERASE,
    },
    # Final, except that a review decision that ended a claim may be taken back
    # within its undo window (the role `undo`, nothing else): a side that lost a
    # conflict, a memory rejected or invalidated on review, returns to where the
    # decision found it.
    _C.SUPERSEDED: {
        _C.ACTIVE: frozenset({_W.UNDO}),
        _C.CONFLICTED: frozenset({_W.UNDO}),
        **_ERASE,
    },
    _C.INVALIDATED: {_C.ACTIVE: frozenset({_W.UNDO}), **_ERASE},
    _C.REJECTED: {
        _C.CANDIDATE: frozenset({_W.UNDO}),
        _C.QUARANTINED: frozenset({_W.UNDO}),
        _C.ACTIVE: frozenset({_W.UNDO}),
        _C.CONFLICTED: frozenset({_W.UNDO}),
        **_ERASE,
    },
    _C.ERASED: {},
}


# The machine every move of a claim goes through (`common.transitions.move_row`;
# `moves_recorded` for the set-wise SQL paths, whose WHERE is `sources(to, role)`):
# each move audited as `claim.<to>`. Review decisions close their own items, so only
# an erasure closes a claim's open items by itself.
CLAIM_MACHINE = StateMachine(
    label="claim",
    moves=CLAIM_TRANSITIONS,
    gated_role=ClaimRole.UNDO,
    verb="claim.{to}",
    review_target="claim",
    closes_reviews_at=frozenset({_C.ERASED}),
    states=tuple(_C.values),
)


def allowed_claim_targets(status: str, role: str | None = None) -> list[str]:
    """The statuses a claim in `status` may move to (by `role`, or by anyone)."""
    return CLAIM_MACHINE.targets(status, role)


def claim_sources_for(to: str, role: str | None = None) -> list[str]:
    """The statuses from which `role` (or anyone) may move a claim to `to`, for set-based
    moves in SQL (`WHERE status = ANY(%s)`)."""
    return CLAIM_MACHINE.sources(to, role)


class GateDecision(models.TextChoices):
    ACCEPTED = "accepted"
    MERGED = "merged"
    NEEDS_REVIEW = "needs_review"
    CONFLICT = "conflict"
    SUPERSEDED_PREVIOUS = "superseded_previous"
    QUARANTINED = "quarantined"
    REJECTED = "rejected"


# Generated from the table so the database and the services cannot disagree.
# Moves only an undo may make (a decision taken back) pass only while the undo
# service says so (`common.transitions.role_gated`), so raw SQL cannot make them.
@pgtrigger.register(CLAIM_MACHINE.trigger("claim_status_transition"))
class Claim(models.Model):
    """A fact, preference or experience about a subject, with its provenance and times.

    Identity is (tenant, subject, predicate, scope). The database allows one
    active claim per identity; `scope_key` is the canonical JSON of `scope`
    so the identity can be indexed.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    subject = models.ForeignKey(Subject, on_delete=models.PROTECT, related_name="claims")
    kind = models.CharField(max_length=16, choices=ClaimKind.choices)
    predicate = models.CharField(max_length=200)
    scope = models.JSONField(default=dict, blank=True)
    scope_key = models.CharField(max_length=1000, default="{}")
    scope_size = models.PositiveSmallIntegerField(default=0)
    value = models.JSONField(null=True, blank=True)
    text = models.TextField(blank=True)
    authority = models.CharField(max_length=16, choices=Authority.choices)
    basis = models.CharField(max_length=16, choices=Basis.choices)
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_to = models.DateTimeField(null=True, blank=True)
    available_at = models.DateTimeField()
    recorded_at = models.DateTimeField(db_default=Now())
    refresh_after = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=ClaimStatus.choices)
    revision = models.PositiveIntegerField(default=1)
    supersedes = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="superseded_by"
    )
    derived_from = models.ManyToManyField(
        "self", symmetrical=False, related_name="derivatives", blank=True
    )
    # The other side(s) of an unresolved contradiction on this identity.
    conflicts_with = ArrayField(models.UUIDField(), default=list, blank=True)
    gate_decision = models.CharField(max_length=24, choices=GateDecision.choices)
    gate_reasons = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    # How the screen read the content: the injection band, the learned head's score and
    # the reading it scored highest, the rules' signals and the reading they fired on.
    screen = models.JSONField(default=dict, db_default={}, blank=True)
    agent = models.CharField(max_length=100, blank=True)
    token_id = models.BigIntegerField(null=True, blank=True)
    value_digest = models.CharField(max_length=80, blank=True)
    # The strongest class the rules or the agent's hint found, and every class
    # it needed consent for: withdrawing one of them deletes the claim.
    sensitivity = models.CharField(
        max_length=32,
        choices=Sensitivity.choices,
        default=Sensitivity.NORMAL,
        db_default=Sensitivity.NORMAL,
    )
    consent_classes = ArrayField(
        models.CharField(max_length=32), default=list, db_default=[], blank=True
    )
    search_vector = SearchVectorField(null=True, editable=False)
    # Character n-grams of the text, so unsegmented scripts (Chinese) and exact
    # identifiers (ERR_4711, paths) are found without a word parser.
    ngrams = ArrayField(models.CharField(max_length=8), default=list, blank=True, editable=False)
    last_used_at = models.DateTimeField(null=True, blank=True)
    use_count = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(db_default=Now())

    class Meta:
        app_label = "memory"
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "subject", "predicate", "scope_key"],
                condition=models.Q(status="active"),
                name="claim_one_active_per_identity",
            ),
            models.CheckConstraint(
                condition=models.Q(status__in=ClaimStatus.values), name="claim_status_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(valid_to__isnull=True)
                | models.Q(valid_from__isnull=True)
                | models.Q(valid_to__gt=models.F("valid_from")),
                name="claim_valid_interval",
            ),
        ]
        indexes = [
            models.Index(
                fields=["tenant", "subject", "predicate"],
                condition=models.Q(status="active"),
                name="claim_active_by_subject",
            ),
            models.Index(fields=["tenant", "subject", "status", "-recorded_at"]),
            # An identity's claims of every status, newest revision first: what a write
            # reads to number its revision and find the active claim, per identity
            # rather than over the subject's or the tenant's claims.
            models.Index(
                fields=["tenant", "subject", "predicate", "scope_key", "-revision"],
                name="claim_identity_revisions",
            ),
            # A subject's claim list, newest first (the API's `?subject=` cursor pages).
            models.Index(
                fields=["tenant", "subject", "-recorded_at", "-id"], name="claim_subject_recent"
            ),
            # The tenant-wide claim list (cursor on recorded_at, id) and the
            # dashboard's recent gate verdicts read the newest claims first.
            models.Index(fields=["tenant", "-recorded_at", "-id"], name="claim_tenant_recent"),
            GinIndex(fields=["search_vector"], name="claim_search_vector"),
            GinIndex(fields=["ngrams"], name="claim_ngrams"),
        ]

    def __str__(self) -> str:
        return f"{self.subject_id}:{self.predicate} r{self.revision} ({self.status})"


class ClaimSource(models.Model):
    """Evidence for a claim: a ledger event, or an outside document seen at a time."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="sources")
    event = models.ForeignKey(
        Event, null=True, blank=True, on_delete=models.PROTECT, related_name="claim_sources"
    )
    uri = models.CharField(max_length=1000, blank=True)
    observed_at = models.DateTimeField(null=True, blank=True)
    digest = models.CharField(max_length=80, blank=True)
    added_at = models.DateTimeField(db_default=Now())

    class Meta:
        app_label = "memory"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(event__isnull=False) | ~models.Q(uri=""),
                name="claim_source_has_event_or_uri",
            )
        ]

    def __str__(self) -> str:
        return f"source of {self.claim_id}: {self.event_id or self.uri}"


class TraceKind(models.TextChoices):
    """What produced a trace: a recall, or a read of the subject's hot-memory block."""

    RECALL = "recall"
    HOT_MEMORY = "hot_memory"


class RecallTrace(models.Model):
    """What a recall asked, what the legal set excluded, and what was returned."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    # Null when the asked-for subject has no memories at all (recall never creates one).
    subject = models.ForeignKey(
        Subject, null=True, on_delete=models.PROTECT, related_name="recall_traces"
    )
    subject_key = models.CharField(max_length=255, default="")
    token_id = models.BigIntegerField(null=True, blank=True)
    query = models.TextField(blank=True)
    filters = models.JSONField(default=dict)
    excluded = models.JSONField(default=dict)
    chosen = ArrayField(models.UUIDField(), default=list)
    budget_chars = models.PositiveIntegerField(null=True)
    used_chars = models.PositiveIntegerField(default=0)
    duration_ms = models.FloatField(default=0)
    # How the returned claims were ranked: each signal's rank or score per claim.
    ranking = models.JSONField(default=dict, db_default=models.Value({}, models.JSONField()))
    created_at = models.DateTimeField(db_default=Now())
    redacted_at = models.DateTimeField(null=True, blank=True)
    kind = models.CharField(
        max_length=16, choices=TraceKind.choices, default=TraceKind.RECALL, db_default="recall"
    )

    class Meta:
        app_label = "memory"
        indexes = [
            models.Index(fields=["tenant", "subject", "-created_at"]),
            # "Where was this claim used": the traces whose answer held it.
            GinIndex(fields=["chosen"], name="recall_trace_chosen"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.id}"


@pgtrigger.register(
    pgtrigger.Protect(name="recall_use_no_delete", operation=pgtrigger.Delete),
    # A report is never rewritten; erasure alone may blank the run and task ids
    # (the agent's words) of the uses of a redacted trace.
    pgtrigger.Protect(
        name="recall_use_only_redaction",
        operation=pgtrigger.Update,
        condition=pgtrigger.Condition(
            "NEW.run_id <> '' OR NEW.task_id <> '' "
            "OR (NEW.tenant_id, NEW.trace_id, NEW.claim_id, NEW.position, NEW.cited, "
            "NEW.harmful, NEW.past_refresh, NEW.token_id, NEW.reported_at) IS DISTINCT FROM "
            "(OLD.tenant_id, OLD.trace_id, OLD.claim_id, OLD.position, OLD.cited, "
            "OLD.harmful, OLD.past_refresh, OLD.token_id, OLD.reported_at)"
        ),
    ),
)
class RecallUse(models.Model):
    """An agent's report that a recalled claim went into a model's context (and was cited).

    A claim a trace returned and no report names was recalled and not used:
    context the agent paid for and did not need.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    trace = models.ForeignKey(RecallTrace, on_delete=models.PROTECT, related_name="uses")
    claim = models.ForeignKey(Claim, on_delete=models.PROTECT, related_name="recall_uses")
    # Where in the prompt the agent put it (0 first), when it says.
    position = models.PositiveIntegerField(null=True, blank=True)
    cited = models.BooleanField(default=False)
    # The agent found it wrong or misleading once it was in the context.
    harmful = models.BooleanField(default=False)
    # The claim was past its `refresh_after` when the trace returned it (include_stale).
    past_refresh = models.BooleanField(default=False)
    run_id = models.CharField(max_length=200, blank=True)
    task_id = models.CharField(max_length=200, blank=True)
    token_id = models.BigIntegerField(null=True, blank=True)
    reported_at = models.DateTimeField(db_default=Now())

    class Meta:
        app_label = "memory"
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "trace", "claim"], name="recall_use_once_per_trace"
            )
        ]
        indexes = [models.Index(fields=["tenant", "claim"], name="recall_use_by_claim")]

    def __str__(self) -> str:
        return f"use of {self.claim_id} in {self.trace_id}"


AUTHORITY_RANK_SQL = models.Case(
    *(
        models.When(authority=authority, then=models.Value(rank))
        for authority, rank in AUTHORITY_RANK.items()
    ),
    default=models.Value(0),
    output_field=models.IntegerField(),
)
