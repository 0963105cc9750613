"""Vectors of claims (for semantic recall) and of ledger events (for session search),
in tables every PostgreSQL can hold.

A claim's vector is a plain float array (pgvector can cast it to `vector`); `packed`
holds the same vector as little-endian float32 bytes, small enough to stay in
the row (the float array is compressed out of line, and decoding it costs a
recall far more than the arithmetic). Recall reads a subject's packed vectors
in one statement and computes the exact similarities (dot products: the vectors
are unit length) itself, only inside the subject's legal set.
"""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models.functions import Now

from accounts.models import Tenant
from memory.claims.models.claims import Claim
from memory.claims.models.ledger import Event


class ClaimEmbedding(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="embeddings")
    # Vectors of different models are not comparable; recall uses its own model's.
    model = models.CharField(max_length=200)
    dim = models.PositiveSmallIntegerField()
    vector = ArrayField(models.FloatField())
    # `vector` as float32 bytes, for recall without pgvector (see the module docstring).
    packed = models.BinaryField(null=True, blank=True)
    # sha256 of the embedded text: a claim whose text changed is embedded again.
    digest = models.CharField(max_length=64)
    embedded_at = models.DateTimeField(db_default=Now())
    # Seconds from the claim's commit to its embedding (the lag metric).
    lag_seconds = models.FloatField(default=0)

    class Meta:
        app_label = "memory"
        constraints = [
            models.UniqueConstraint(fields=["claim", "model"], name="claim_embedding_one_per_model")
        ]

    def __str__(self) -> str:
        return f"embedding of {self.claim_id} ({self.model})"


class EventEmbedding(models.Model):
    """The vector of a ledger event's text, for session search by meaning.

    Only the packed float32 form: ledger discovery computes the similarities of a
    subject's recent events itself, as recall does. The row goes when the event's text
    does: a trigger on the ledger deletes it when an event is redacted or scrubbed, so
    no path that changes an event can leave a vector of words that were erased.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="embeddings")
    model = models.CharField(max_length=200)
    dim = models.PositiveSmallIntegerField()
    packed = models.BinaryField()
    digest = models.CharField(max_length=64)
    embedded_at = models.DateTimeField(db_default=Now())
    # Seconds from the event's commit to its embedding (the lag metric).
    lag_seconds = models.FloatField(default=0)

    class Meta:
        app_label = "memory"
        constraints = [
            models.UniqueConstraint(fields=["event", "model"], name="event_embedding_one_per_model")
        ]

    def __str__(self) -> str:
        return f"embedding of event {self.event_id} ({self.model})"
