from __future__ import annotations

import uuid

import pgtrigger
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import BrinIndex
from django.db import models
from django.db.models.functions import Now

from accounts.models import Tenant
from common.append_only import Rewrite, only_rewrites


class Subject(models.Model):
    """Who or what memories are about, named `kind:ref` (user:alice, project:crm)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=32)
    ref = models.CharField(max_length=200)
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        app_label = "memory"
        constraints = [
            models.UniqueConstraint(fields=["tenant", "kind", "ref"], name="subject_unique_ref")
        ]

    def __str__(self) -> str:
        return self.key

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.ref}"


class Sensitivity(models.TextChoices):
    """How careful memdesk is with a piece of content (see memory/claims/sensitivity.py).

    `normal` is the class of nothing special. Every class after `personal` is
    kept only with the subject's consent for it; `sensitive` is the class an
    agent names when it knows the content is sensitive but not how.
    """

    NORMAL = "normal", "None"
    PERSONAL = "personal", "Personal"
    SENSITIVE = "sensitive", "Sensitive (other)"
    HEALTH = "health", "Health"
    FINANCE = "finance", "Finance"
    CREDENTIALS_ADJACENT = "credentials_adjacent", "Credentials-adjacent"
    LOCATION = "location", "Precise location"
    MINORS = "minors", "Minors"
    SEXUAL_ORIENTATION = "sexual_orientation", "Sex life or sexual orientation"
    RELIGION = "religion", "Religion or belief"
    POLITICAL = "political", "Political opinion"
    TRADE_UNION = "trade_union", "Trade-union membership"
    ETHNIC_ORIGIN = "ethnic_origin", "Racial or ethnic origin"
    GENETIC_BIOMETRIC = "genetic_biometric", "Genetic or biometric data"
    CRIMINAL_RECORD = "criminal_record", "Criminal record"


# The kinds a step of a run may report, in the order a run usually goes through them.
PROTOCOL_KINDS = ("started", "proposed", "succeeded", "failed", "skipped", "verified")


# The columns that hold what the agent wrote (or chose to call it): all that
# erasure or a scrub may change in an event. Ids, digests and times stay.
EVENT_WORDS = (
    "kind",
    "run_id",
    "agent",
    "text",
    "body",
    "source_uri",
    "stage",
    "idempotency_key",
    "effect",
    "evidence",
)
EVENT_REDACTION = Rewrite(stamp="redacted_at", clears=EVENT_WORDS)
EVENT_SCRUB = Rewrite(stamp="scrubbed_at", clears=EVENT_WORDS, only_before=("redacted_at",))


@pgtrigger.register(
    pgtrigger.Protect(name="event_no_delete", operation=pgtrigger.Delete),
    # The ledger is append-only; the permitted changes are erasure, which
    # redacts the content once and keeps the row as a tombstone, and, before
    # that, one scrub of the words another subject's deletion found quoted here.
    only_rewrites(name="event_only_redaction", rewrites=[EVENT_REDACTION, EVENT_SCRUB]),
    # An event's vector encodes its words: when redaction or a scrub changes them, the
    # vector goes in the same statement (the embedding worker makes a new one of a
    # scrubbed text). One statement-level trigger, so a deletion that redacts ten
    # thousand events deletes their vectors in one join, not ten thousand times.
    pgtrigger.Trigger(
        name="event_embedding_follows_text",
        level=pgtrigger.Statement,
        when=pgtrigger.After,
        operation=pgtrigger.Update,
        referencing=pgtrigger.Referencing(old="old_events", new="new_events"),
        func="""
            DELETE FROM memory_eventembedding v
            USING old_events o JOIN new_events n ON n.id = o.id
            WHERE v.event_id = n.id
              AND (n.text IS DISTINCT FROM o.text OR n.redacted_at IS NOT NULL);
            RETURN NULL;
        """,
    ),
)
class Event(models.Model):
    """One observation or action in the ledger."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    subject = models.ForeignKey(Subject, on_delete=models.PROTECT, related_name="events")
    run_id = models.CharField(max_length=200, blank=True)
    agent = models.CharField(max_length=100, blank=True)
    kind = models.CharField(max_length=64)
    text = models.TextField(blank=True)
    body = models.JSONField(default=dict, blank=True)
    source_uri = models.CharField(max_length=1000, blank=True)
    observed_at = models.DateTimeField()
    recorded_at = models.DateTimeField(db_default=Now())
    digest = models.CharField(max_length=80)
    sensitivity = models.CharField(
        max_length=32, choices=Sensitivity.choices, default=Sensitivity.NORMAL
    )
    # Claims that were injected into the context that produced this event; a
    # candidate sourced only from such events is the agent quoting itself.
    echo_of = ArrayField(models.UUIDField(), default=list, blank=True)
    token_id = models.BigIntegerField(null=True, blank=True)
    # The protocol fields (docs/protocol.md): an event with a `stage` is a step of a
    # run, its `kind` one of `PROTOCOL_KINDS`. Columns, not keys of `body`, so the
    # ledger can be searched by them and memdesk can refuse a malformed step.
    # Database defaults too: bulk loads that name only the older columns keep working.
    stage = models.CharField(max_length=100, blank=True, db_default="")
    input_fingerprint = models.CharField(max_length=200, blank=True, db_default="")
    policy_version = models.CharField(max_length=100, blank=True, db_default="")
    idempotency_key = models.CharField(max_length=255, blank=True, db_default="")
    # `{system, operation, reference}` of the outside change the step made or saw.
    effect = models.JSONField(null=True, blank=True)
    # `[{uri, observed_at, digest?, excerpt?}]`: what the step's claim rests on.
    evidence = models.JSONField(
        default=list, blank=True, db_default=models.Value([], output_field=models.JSONField())
    )
    redacted_at = models.DateTimeField(null=True, blank=True)
    # When another subject's deletion replaced the words it found quoted here.
    scrubbed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "memory"
        indexes = [
            models.Index(fields=["tenant", "subject", "-recorded_at"]),
            models.Index(fields=["tenant", "run_id"]),
            models.Index(
                fields=["tenant", "stage", "-recorded_at"],
                condition=~models.Q(stage=""),
                name="event_protocol_stage",
            ),
            models.Index(
                fields=["tenant", "idempotency_key"],
                condition=~models.Q(idempotency_key=""),
                name="event_protocol_key",
            ),
            # The ledger is append-only, so rows lie in the order they were recorded: a
            # block-range index finds the recent ones (the embedding sweep's window) at
            # almost no cost to writes.
            BrinIndex(fields=["recorded_at"], name="event_recorded_brin"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.id}"
