"""Which rows still hold a person's content: one SQL condition per table erasure writes.

The erasure statements (services/erasure.py) wipe exactly the rows that match
a table's condition, and the deletion probes (selectors/probes.py) count the
rows a deletion reached that still match it. Both read the condition from
here, so a probe cannot call clean what an erasure would still have wiped.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import models

from accounts.models import AUDIT_SCRUB, AuditEvent
from common.append_only import Rewrite
from common.fingerprints import ERASED_PREFIX
from common.models import IdempotencyRecord
from memory.claims.models import Claim, ClaimSource, Event, RecallTrace
from memory.claims.models.ledger import EVENT_SCRUB
from memory.privacy.models import TombstoneAction, TombstoneTarget
from memory.receipts.models import Checkpoint, Receipt, ReceiptTransition, RecoveryLease, Run
from memory.receipts.models.receipts import RECEIPT_TRANSITION_SCRUB, TERMINAL_RECEIPT_STATES
from reviews.models import DECISION_SCRUB, Decision, ReviewItem, SavedFilter


@dataclass(frozen=True)
class HeldContent:
    """Rows of one table that still hold content, and how a deletion names them."""

    model: type[models.Model]
    # SQL over the table's columns, each written `{t}column` so a caller may qualify it.
    condition: str
    # The column holding the id a tombstone names, and whether it is text (an id in JSON).
    key: str
    key_is_text: bool
    # The (target type, action) of the tombstones naming the rows a deletion reached.
    reached_by: tuple[tuple[str, str], ...]
    # The probe of a deletion report that checks this table.
    probe: str

    @property
    def table(self) -> str:
        return self.model._meta.db_table

    def sql(self, alias: str = "") -> str:
        """The condition, parenthesised, with its columns qualified by `alias` if given."""
        return "(" + self.condition.format(t=f"{alias}." if alias else "") + ")"


_ERASED_CLAIM = (TombstoneTarget.CLAIM, TombstoneAction.ERASED)
_REDACTED_EVENT = (TombstoneTarget.EVENT, TombstoneAction.REDACTED)

CLAIM_CONTENT = HeldContent(
    model=Claim,
    # The value digest stays: it proves what was erased without holding it. The
    # predicate and the scope are the agent's words too: a digest and `{}` remain.
    condition="{t}status <> 'erased' OR {t}value IS NOT NULL OR {t}text <> '' "
    "OR {t}search_vector IS NOT NULL OR cardinality({t}ngrams) > 0 "
    f"OR NOT starts_with({{t}}predicate, '{ERASED_PREFIX}') OR {{t}}scope <> '{{{{}}}}'::jsonb "
    "OR {t}scope_key <> '{{}}'",
    key="id",
    key_is_text=False,
    reached_by=(_ERASED_CLAIM,),
    probe="claims_table",
)
URI_SOURCE_CONTENT = HeldContent(
    model=ClaimSource,
    # A uri may itself carry personal content; an event source keeps only ids.
    condition="{t}event_id IS NULL",
    key="claim_id",
    key_is_text=False,
    reached_by=(_ERASED_CLAIM,),
    probe="claim_sources",
)
# What a redacted event's `kind` becomes: the agent chose the kind's words.
REDACTED_EVENT_KIND = "redacted"
EVENT_CONTENT = HeldContent(
    model=Event,
    condition="{t}redacted_at IS NULL OR {t}text <> '' OR {t}body <> '{{}}'::jsonb "
    "OR {t}source_uri <> '' OR {t}run_id <> '' OR {t}agent <> '' "
    "OR {t}stage <> '' OR {t}idempotency_key <> '' OR {t}effect IS NOT NULL "
    "OR {t}evidence <> '[]'::jsonb "
    f"OR {{t}}kind <> '{REDACTED_EVENT_KIND}'",
    key="id",
    key_is_text=False,
    reached_by=(_REDACTED_EVENT,),
    probe="ledger_events",
)
TRACE_CONTENT = HeldContent(
    model=RecallTrace,
    condition="{t}redacted_at IS NULL OR {t}query <> '' OR {t}filters <> '{{}}'::jsonb "
    "OR {t}ranking <> '{{}}'::jsonb",
    key="id",
    key_is_text=False,
    reached_by=((TombstoneTarget.RECALL_TRACE, TombstoneAction.REDACTED),),
    probe="recall_traces",
)
REPLY_CONTENT = HeldContent(
    model=IdempotencyRecord,
    condition="NOT {t}response_body @> '{{\"redacted\": true}}'::jsonb",
    key="response_body->>'id'",
    key_is_text=True,
    reached_by=(_ERASED_CLAIM, _REDACTED_EVENT),
    probe="idempotency_replies",
)

REVIEW_TOPIC_CONTENT = HeldContent(
    model=ReviewItem,
    # A claim's review item is about its predicate: the topic goes with the claim.
    condition=f"{{t}}target_type = 'claim' AND {{t}}topic <> '' "
    f"AND NOT starts_with({{t}}topic, '{ERASED_PREFIX}')",
    key="target_id",
    key_is_text=True,
    reached_by=(_ERASED_CLAIM,),
    probe="review_items",
)

HELD_CONTENT = (
    CLAIM_CONTENT,
    URI_SOURCE_CONTENT,
    EVENT_CONTENT,
    TRACE_CONTENT,
    REPLY_CONTENT,
    REVIEW_TOPIC_CONTENT,
)


@dataclass(frozen=True)
class QuotedContent:
    """Columns of a table where anyone may have written the deleted content's words,
    whoever the row is about. A deletion finds its distinctive words there and
    replaces them; the generic probe then proves no column of any table kept one."""

    model: type[models.Model]
    columns: tuple[str, ...]
    # True: a string holding a word is replaced whole by a digest. False: only the
    # quoted words are (another subject's event keeps what it said about itself).
    whole: bool
    # Rows that may still be scrubbed (append-only tables allow it once), and the
    # column stamped when they are.
    pending: str = "TRUE"
    stamp: str | None = None

    @property
    def table(self) -> str:
        return self.model._meta.db_table


# Rows an append-only table still lets a deletion scrub (its trigger allows it once).
def _scrubbable(rewrite: Rewrite) -> str:
    return " AND ".join(f"{stamp} IS NULL" for stamp in (*rewrite.only_before, rewrite.stamp))


# Receipts nothing will look up in the outside world any more.
SETTLED_RECEIPTS = "state IN ({})".format(
    ", ".join(f"'{state}'" for state in sorted(TERMINAL_RECEIPT_STATES))
)
QUOTED_CONTENT = (
    QuotedContent(ReviewItem, ("topic",), whole=True),
    # An editor's saved queue view may name a subject or a topic in its name or filters.
    QuotedContent(SavedFilter, ("name", "query"), whole=True),
    # The append-only records: what their trigger lets a scrub change, and nothing else.
    QuotedContent(
        Decision,
        DECISION_SCRUB.clears,
        whole=True,
        pending=_scrubbable(DECISION_SCRUB),
        stamp=DECISION_SCRUB.stamp,
    ),
    QuotedContent(
        AuditEvent,
        AUDIT_SCRUB.clears,
        whole=True,
        pending=_scrubbable(AUDIT_SCRUB),
        stamp=AUDIT_SCRUB.stamp,
    ),
    QuotedContent(
        Receipt,
        (
            "operation",
            "target",
            "intent",
            "run_id",
            "policy_version",
            "agent",
            "external_id",
            "error_code",
        ),
        whole=True,
    ),
    # A run's snapshot: the agent's summary of its inputs may quote the person.
    QuotedContent(
        Run, ("run_id", "agent", "summary", "policy_version", "source_versions"), whole=True
    ),
    # A receipt's key and lookup settings only once it is settled: while reconciliation
    # may still run, the outside system is looked up by them. Lookups by key match the
    # replacing digest too (`common.fingerprints.identifier_forms`), so a retry with the
    # original key still finds the receipt instead of making a second effect.
    QuotedContent(Receipt, ("idempotency_key", "reconciler"), whole=True, pending=SETTLED_RECEIPTS),
    QuotedContent(
        ReceiptTransition,
        RECEIPT_TRANSITION_SCRUB.clears,
        whole=True,
        pending=_scrubbable(RECEIPT_TRANSITION_SCRUB),
        stamp=RECEIPT_TRANSITION_SCRUB.stamp,
    ),
    # Found again by the original key: the replay of an `Idempotency-Key`, the recovery
    # of a task. A reply quoting the words was erased before (`redact_replies_quoting`).
    QuotedContent(IdempotencyRecord, ("key",), whole=True),
    QuotedContent(Checkpoint, ("task_key", "run_id", "stage", "allowed_next_stages"), whole=True),
    QuotedContent(RecoveryLease, ("task_key", "holder"), whole=True),
    # Events of other subjects (a project's notes quoting the person): the quoted
    # words only. The subject's own events are redacted whole by the deletion.
    QuotedContent(
        Event,
        EVENT_SCRUB.clears,
        whole=False,
        pending=_scrubbable(EVENT_SCRUB),
        stamp=EVENT_SCRUB.stamp,
    ),
)
