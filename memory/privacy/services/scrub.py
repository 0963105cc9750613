"""Scrubbing the deleted content's words out of rows that are about someone else.

A deletion erases the rows it reaches by id. The same words may also have been
written where no id leads: an editor's note, an agent's invalidation reason in
the audit log, a receipt's intent, a project's meeting notes. For each table
of `memory.privacy.held_content.QUOTED_CONTENT` this finds the tenant's rows whose
columns hold a distinctive word (one ILIKE prefilter per table) and replaces,
in those rows only, every string holding one by a short keyed digest, or just
the quoted words where the row is another subject's own event. Ids, times and
digests stay, so the audit trail still says who did what and when.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from re import Pattern
from typing import Any

from django.contrib.postgres.fields import ArrayField
from django.db import IntegrityError, models, transaction

from common.fingerprints import erased_marker
from memory.claims.models import Event
from memory.claims.services.embeddings import event_embeddings_enqueue_on_commit
from memory.privacy.held_content import QUOTED_CONTENT, SETTLED_RECEIPTS, QuotedContent
from memory.privacy.services.erasure import sql_rows
from memory.privacy.terms import like_patterns, quotable_terms, word_pattern
from memory.receipts.models import Receipt

QUOTE_MARK = "[erased]"


def _string_scrubber(words: Pattern[str], *, whole: bool) -> Callable[[str], str]:
    def scrub(value: str) -> str:
        if not words.search(value):
            return value
        return erased_marker(value) if whole else words.sub(QUOTE_MARK, value)

    return scrub


def _scrub_json(value: Any, scrub: Callable[[str], str]) -> Any:
    # Keys too: an agent names its intent's fields as it likes.
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub(key): _scrub_json(item, scrub) for key, item in value.items()}
    if isinstance(value, list):
        return [_scrub_json(item, scrub) for item in value]
    return value


@dataclass(frozen=True)
class Scrubbed:
    table: str
    # The primary keys of the rows changed.
    changed: list[Any]

    @property
    def rows(self) -> int:
        return len(self.changed)


def _scrub_table(
    quoted: QuotedContent, *, tenant_id: int, terms: list[str], now: datetime
) -> Scrubbed:
    patterns = like_patterns(terms)
    matches = " OR ".join(f"{column}::text ILIKE ANY(%s)" for column in quoted.columns)
    pk = quoted.model._meta.pk.column
    ids = [
        row[0]
        for row in sql_rows(
            f"SELECT {pk} FROM {quoted.table} WHERE tenant_id = %s "  # noqa: S608
            f"AND {quoted.pending} AND ({matches})",
            [tenant_id, *([patterns] * len(quoted.columns))],
        )
    ]
    if not ids:
        return Scrubbed(quoted.table, [])
    scrub = _string_scrubber(word_pattern(terms), whole=quoted.whole)
    fields = {column: quoted.model._meta.get_field(column) for column in quoted.columns}
    changed: list[Any] = []
    for row in quoted.model._default_manager.filter(pk__in=ids).values("pk", *quoted.columns):
        changes: dict[str, Any] = {}
        for column, field in fields.items():
            value = row[column]
            kept = (
                _scrub_json(value, scrub)
                if isinstance(field, models.JSONField | ArrayField)
                else (scrub(value) if isinstance(value, str) else value)
            )
            if kept != value:
                changes[column] = kept
        if not changes:
            # ILIKE matched what the word test did not (a key of memdesk's own, or
            # a case fold): nothing of the content is there.
            continue
        if quoted.stamp:
            changes[quoted.stamp] = now
        try:
            with transaction.atomic():
                if quoted.model._default_manager.filter(pk=row["pk"]).update(**changes):
                    changed.append(row["pk"])
        except IntegrityError:
            # The digest of a unique identifier is already another row's identifier
            # (only a race with a write under the original can do that): the row keeps
            # its words, and the deletion's generic probe reports the copy.
            continue
    return Scrubbed(quoted.table, changed)


def scrub_quoted_content(*, tenant_id: int, terms: list[str], now: datetime) -> dict[str, int]:
    """Replace the distinctive words wherever `QUOTED_CONTENT` says anyone may have
    written them; rows changed per table."""
    terms = quotable_terms(terms)
    if not terms:
        return {}
    counts: dict[str, int] = {}
    for quoted in QUOTED_CONTENT:
        scrubbed = _scrub_table(quoted, tenant_id=tenant_id, terms=terms, now=now)
        if scrubbed.rows:
            counts[scrubbed.table] = counts.get(scrubbed.table, 0) + scrubbed.rows
        if quoted.model is Event and scrubbed.changed:
            # The ledger's trigger dropped these events' vectors with the old words; what
            # they say now is embedded again, however old the event (the sweep looks only
            # at recent ones).
            event_embeddings_enqueue_on_commit(event_ids=scrubbed.changed)
    return counts


def receipt_keys_kept_in_flight(*, tenant_id: int, terms: list[str]) -> int:
    """Receipts still being settled whose key or lookup settings hold a distinctive word:
    the scrub leaves them (reconciliation looks the outside system up by them), so the
    deletion's report says how many, and its generic probe keeps it out of `completed`."""
    terms = quotable_terms(terms)
    if not terms:
        return 0
    patterns = like_patterns(terms)
    return int(
        sql_rows(
            f"SELECT count(*) FROM {Receipt._meta.db_table} WHERE tenant_id = %s "  # noqa: S608
            f"AND NOT ({SETTLED_RECEIPTS}) "
            "AND (idempotency_key ILIKE ANY(%s) OR reconciler::text ILIKE ANY(%s))",
            [tenant_id, patterns, patterns],
        )[0][0]
    )
