from __future__ import annotations

import uuid

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models.functions import Now

from accounts.models import Tenant
from memory.models.ledger import Event, Subject


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
    ERASED = "erased"


class GateDecision(models.TextChoices):
    ACCEPTED = "accepted"
    MERGED = "merged"
    NEEDS_REVIEW = "needs_review"
    CONFLICT = "conflict"
    SUPERSEDED_PREVIOUS = "superseded_previous"
    QUARANTINED = "quarantined"
    REJECTED = "rejected"


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
    agent = models.CharField(max_length=100, blank=True)
    token_id = models.BigIntegerField(null=True, blank=True)
    value_digest = models.CharField(max_length=80, blank=True)
    search_vector = SearchVectorField(null=True, editable=False)
    # Character n-grams of the text, so unsegmented scripts (Chinese) and exact
    # identifiers (ERR_4711, paths) are found without a word parser.
    ngrams = ArrayField(models.CharField(max_length=8), default=list, blank=True, editable=False)
    last_used_at = models.DateTimeField(null=True, blank=True)
    use_count = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(db_default=Now())

    class Meta:
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
        constraints = [
            models.CheckConstraint(
                condition=models.Q(event__isnull=False) | ~models.Q(uri=""),
                name="claim_source_has_event_or_uri",
            )
        ]

    def __str__(self) -> str:
        return f"source of {self.claim_id}: {self.event_id or self.uri}"


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

    class Meta:
        indexes = [models.Index(fields=["tenant", "subject", "-created_at"])]

    def __str__(self) -> str:
        return f"recall {self.id}"


AUTHORITY_RANK_SQL = models.Case(
    *(
        models.When(authority=authority, then=models.Value(rank))
        for authority, rank in AUTHORITY_RANK.items()
    ),
    default=models.Value(0),
    output_field=models.IntegerField(),
)
