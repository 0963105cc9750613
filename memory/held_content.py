"""Which rows still hold a person's content: one SQL condition per table erasure writes.

The erasure statements (services/erasure.py) wipe exactly the rows that match
a table's condition, and the deletion probes (selectors/probes.py) count the
rows a deletion reached that still match it. Both read the condition from
here, so a probe cannot call clean what an erasure would still have wiped.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import models

from common.models import IdempotencyRecord
from memory.models import Claim, ClaimSource, Event, RecallTrace, TombstoneAction, TombstoneTarget


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
    # The value digest stays: it proves what was erased without holding it.
    condition="{t}status <> 'erased' OR {t}value IS NOT NULL OR {t}text <> '' "
    "OR {t}search_vector IS NOT NULL OR cardinality({t}ngrams) > 0",
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
EVENT_CONTENT = HeldContent(
    model=Event,
    condition="{t}redacted_at IS NULL OR {t}text <> '' OR {t}body <> '{{}}'::jsonb "
    "OR {t}source_uri <> ''",
    key="id",
    key_is_text=False,
    reached_by=(_REDACTED_EVENT,),
    probe="ledger_events",
)
TRACE_CONTENT = HeldContent(
    model=RecallTrace,
    condition="{t}redacted_at IS NULL OR {t}query <> '' OR {t}filters <> '{{}}'::jsonb",
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

HELD_CONTENT = (CLAIM_CONTENT, URI_SOURCE_CONTENT, EVENT_CONTENT, TRACE_CONTENT, REPLY_CONTENT)
