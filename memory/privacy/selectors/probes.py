"""The probes that prove a deletion; their queries and results go into its report.

They look for deleted content everywhere it could survive: the claims
table, the full-text and n-gram indexes, the ledger, hot memory (rendered and
cached), recall, recall traces, the audit log and stored idempotent replies.
They search for the deleted content's distinctive words, which only the
worker holds (between reading the content and wiping it); a probe's query
names them by placeholder and the report keeps their keyed digests.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.db import connection

from accounts.models import AuditEvent, Tenant
from common.models import IdempotencyRecord
from memory.claims.hot_memory import cached_hot_memory_blocks
from memory.claims.models import Claim, ClaimSource, ClaimStatus, Event, RecallTrace, Subject
from memory.claims.search import ngrams, normalise
from memory.claims.selectors.claims import claims_recall
from memory.claims.selectors.hot_memory import hot_memory, hot_memory_cache_prefix
from memory.claims.selectors.recall_ranking import RecallQuery
from memory.privacy.held_content import (
    CLAIM_CONTENT,
    EVENT_CONTENT,
    REPLY_CONTENT,
    REVIEW_TOPIC_CONTENT,
    TRACE_CONTENT,
    URI_SOURCE_CONTENT,
    HeldContent,
)
from memory.privacy.models import DeletionRequest, Tombstone, TombstoneAction, TombstoneTarget
from memory.privacy.selectors.probes_everywhere import probe_everywhere, probe_result
from memory.privacy.terms import like_patterns, term_digest

# Statuses in which a claim still takes part in recall or review.
LIVE_CLAIM_STATUSES = (
    ClaimStatus.ACTIVE,
    ClaimStatus.CANDIDATE,
    ClaimStatus.CONFLICTED,
    ClaimStatus.QUARANTINED,
)
PROBE_BUDGET_CHARS = 4000
MAX_PROBED_SCOPES = 10

_CLAIM = Claim._meta.db_table
_SOURCE = ClaimSource._meta.db_table
_EVENT = Event._meta.db_table
_TRACE = RecallTrace._meta.db_table
_IDEMPOTENCY = IdempotencyRecord._meta.db_table
_AUDIT = AuditEvent._meta.db_table
_TOMBSTONE = Tombstone._meta.db_table
_ERASED = (TombstoneTarget.CLAIM, TombstoneAction.ERASED)
_INVALIDATED = (TombstoneTarget.CLAIM, TombstoneAction.INVALIDATED)
_REDACTED_EVENT = (TombstoneTarget.EVENT, TombstoneAction.REDACTED)
_REDACTED_TRACE = (TombstoneTarget.RECALL_TRACE, TombstoneAction.REDACTED)


def _count(sql: str, params: list[Any]) -> int:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return int(cursor.fetchone()[0])


def _has_terms(content: str, terms: list[str]) -> bool:
    folded = normalise(content)
    return any(term in folded for term in terms)


@dataclass(frozen=True)
class _Scope:
    """What one deletion touched, read back from its tombstones."""

    tenant: Tenant
    deletion: DeletionRequest
    # Claim ids as text, the form hot memory blocks and recall results name them in.
    erased: frozenset[str]
    invalidated: frozenset[str]
    events: int
    traces: int
    subjects: list[Subject]
    terms: list[str]

    @property
    def patterns(self) -> list[str]:
        return like_patterns(self.terms)

    def tombstoned(self, *kinds: tuple[str, str], as_text: bool = False) -> tuple[str, list[Any]]:
        """A subquery of this deletion's tombstoned ids of these (target type, action)
        kinds, and its parameters: the probes read the ids where they are stored
        instead of shipping arrays of 10,000 ids with every query."""
        target = "target_id::text" if as_text else "target_id"
        kinds_sql = " OR ".join("(target_type = %s AND action = %s)" for _ in kinds)
        return (
            f"(SELECT {target} FROM {_TOMBSTONE} WHERE tenant_id = %s "  # noqa: S608
            f"AND deletion_id = %s AND ({kinds_sql}))",
            [self.tenant.pk, self.deletion.pk, *(part for kind in kinds for part in kind)],
        )


def _scope(*, tenant: Tenant, deletion: DeletionRequest, terms: list[str]) -> _Scope:
    # One row: a subject's deletion has 10,000 tombstones, and a row (and a UUID) for
    # each would only be counted or turned back into text.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT string_agg(target_id::text, ',') FILTER (WHERE target_type = %s "  # noqa: S608
            "AND action = %s), string_agg(target_id::text, ',') FILTER (WHERE "
            "target_type = %s AND action = %s), count(*) FILTER (WHERE target_type = %s "
            "AND action = %s), count(*) FILTER (WHERE target_type = %s AND action = %s) "
            f"FROM {_TOMBSTONE} WHERE tenant_id = %s AND deletion_id = %s",
            [*_ERASED, *_INVALIDATED, *_REDACTED_EVENT, *_REDACTED_TRACE, tenant.pk, deletion.pk],
        )
        erased, invalidated, events, traces = cursor.fetchone()
    subject_ids = {deletion.subject_id, *deletion.report.get("subjects", [])}
    return _Scope(
        tenant=tenant,
        deletion=deletion,
        erased=frozenset(erased.split(",") if erased else ()),
        invalidated=frozenset(invalidated.split(",") if invalidated else ()),
        events=events,
        traces=traces,
        subjects=list(Subject.objects.filter(tenant=tenant, pk__in=subject_ids).order_by("pk")),
        terms=terms,
    )


def _probe_words(terms: list[str] | None) -> dict[str, Any]:
    if terms is None:
        return probe_result(
            "distinctive_words",
            "words of the deleted content, read before the wipe",
            {"available": False, "why": "an earlier attempt wiped the content and then stopped"},
            False,
        )
    return probe_result(
        "distinctive_words",
        "words of the deleted content that occur in no other claim of the tenant",
        {"available": True, "count": len(terms), "digests": [term_digest(t) for t in terms]},
        True,
    )


@dataclass(frozen=True)
class _ClaimsPass:
    """One pass over the deletion's claim tombstones joined to the claims: what the claims
    probe counts and the scopes the recall probe searches, read together because each
    pass looks up every erased claim by id (10,000 of them for a large subject)."""

    with_content: int
    still_live: int
    touched_scopes: list[tuple[int, dict[str, str]]]


def _claims_pass(s: _Scope) -> _ClaimsPass:
    # Driven by the deletion's tombstones: one pass over its own rows, however big the table.
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FILTER (WHERE t.action = %s AND {CLAIM_CONTENT.sql('c')}), "  # noqa: S608
            "count(*) FILTER (WHERE t.action = %s AND c.status = ANY(%s)), "
            "COALESCE(jsonb_agg(DISTINCT jsonb_build_array(c.subject_id, c.scope)) "
            "FILTER (WHERE t.action = ANY(%s)), '[]') "
            f"FROM {_TOMBSTONE} t JOIN {_CLAIM} c ON c.id = t.target_id "
            "WHERE t.tenant_id = %s AND t.deletion_id = %s AND t.target_type = %s "
            "AND c.tenant_id = %s",
            [
                TombstoneAction.ERASED,
                TombstoneAction.INVALIDATED,
                list(LIVE_CLAIM_STATUSES),
                [_ERASED[1], _INVALIDATED[1]],
                s.tenant.pk,
                s.deletion.pk,
                TombstoneTarget.CLAIM,
                s.tenant.pk,
            ],
        )
        with_content, still_live, scopes = cursor.fetchone()
    # jsonb arrives as text on Django's connections; DISTINCT sorted it by subject.
    touched = [(subject_id, scope) for subject_id, scope in json.loads(scopes)]
    return _ClaimsPass(with_content=with_content, still_live=still_live, touched_scopes=touched)


def _probe_claims(s: _Scope, claims: _ClaimsPass) -> dict[str, Any]:
    with_content, still_live = claims.with_content, claims.still_live
    return probe_result(
        "claims_table",
        f"{_held_query(CLAIM_CONTENT, 'erased')}; "
        "and :invalidated still active, candidate, conflicted or quarantined",
        {
            "erased_checked": len(s.erased),
            "with_content": with_content,
            "invalidated_checked": len(s.invalidated),
            "still_live": still_live,
        },
        with_content == 0 and still_live == 0,
    )


def _still_held(s: _Scope, held: HeldContent) -> int:
    """Rows of `held`'s table that this deletion reached and that still hold content."""
    reached, params = s.tombstoned(*held.reached_by, as_text=held.key_is_text)
    return _count(
        f"SELECT count(*) FROM {held.table} WHERE tenant_id = %s "  # noqa: S608
        f"AND {held.key} IN {reached} AND {held.sql()}",
        [s.tenant.pk, *params],
    )


def _held_query(held: HeldContent, reached: str) -> str:
    """How a report shows the `_still_held` query, the reached ids named `:reached`."""
    # Shown, never run: the ids are named, not interpolated.
    return (
        f"SELECT count(*) FROM {held.table} "  # noqa: S608
        f"WHERE {held.key} = ANY(:{reached}) AND {held.sql()}"
    )


def _probe_sources(s: _Scope) -> dict[str, Any]:
    uri_sources = _still_held(s, URI_SOURCE_CONTENT)
    return probe_result(
        "claim_sources",
        _held_query(URI_SOURCE_CONTENT, "erased"),
        {"uri_sources": uri_sources},
        uri_sources == 0,
    )


def _probe_indexes(s: _Scope) -> list[dict[str, Any]]:
    # Both indexes, every word, one statement: each word is still its own index
    # lookup (the join's inner side), and a claim matching two words counts twice.
    grams = [" ".join(ngrams(term)) for term in s.terms]
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT
              (SELECT count(*) FROM unnest(%s::text[]) AS t(term)
               JOIN {_CLAIM} c ON c.tenant_id = %s
                AND numnode(plainto_tsquery('english', t.term)) > 0
                AND c.search_vector @@ plainto_tsquery('english', t.term)),
              (SELECT count(*) FROM unnest(%s::text[]) AS t(grams)
               JOIN {_CLAIM} c ON c.tenant_id = %s AND t.grams <> ''
                AND c.ngrams @> string_to_array(t.grams, ' ')::varchar[])
            """,  # noqa: S608
            [s.terms, s.tenant.pk, grams, s.tenant.pk],
        )
        full_text, trigrams = cursor.fetchone()
    return [
        probe_result(
            "full_text_index",
            "SELECT count(*) FROM memory_claim WHERE tenant_id = :tenant AND "
            "search_vector @@ plainto_tsquery('english', :word)",
            {"words": len(s.terms), "matches": full_text},
            full_text == 0,
            per_word=len(s.terms),
        ),
        probe_result(
            "trigram_index",
            "SELECT count(*) FROM memory_claim WHERE tenant_id = :tenant AND "
            "ngrams @> ngrams(:word)",
            {"words": len(s.terms), "matches": trigrams},
            trigrams == 0,
            per_word=len(s.terms),
        ),
    ]


def _probe_events(s: _Scope) -> dict[str, Any]:
    erased, erased_params = s.tombstoned(_ERASED)
    with_content = _still_held(s, EVENT_CONTENT)
    quoting = 0
    if s.terms:
        patterns = s.patterns
        quoting = _count(
            f"SELECT count(*) FROM {_EVENT} WHERE tenant_id = %s AND redacted_at IS NULL "  # noqa: S608
            # cardinality first: most events quote nothing and skip the overlap test.
            "AND (subject_id = %s OR (cardinality(echo_of) > 0 AND echo_of && "
            f"ARRAY{erased}) "
            f"OR id IN (SELECT event_id FROM {_SOURCE} WHERE claim_id IN {erased})) "
            "AND (text ILIKE ANY(%s) OR body::text ILIKE ANY(%s) OR source_uri ILIKE ANY(%s))",
            [
                s.tenant.pk,
                s.deletion.subject_id,
                *erased_params,
                *erased_params,
                patterns,
                patterns,
                patterns,
            ],
        )
    return probe_result(
        "ledger_events",
        f"{_held_query(EVENT_CONTENT, 'redacted')}; and unredacted events of the "
        "subject, sources of :erased or events quoting :erased (echo_of) containing :word, ",
        {"redacted_checked": s.events, "with_content": with_content, "quoting": quoting},
        with_content == 0 and quoting == 0,
        per_word=len(s.terms),
    )


def _probe_hot_memory(s: _Scope) -> dict[str, Any]:
    erased = s.erased
    rendered_dirty = cached = cached_dirty = 0
    for subject in s.subjects:
        block = hot_memory(tenant=s.tenant, subject=subject, budget_chars=PROBE_BUDGET_CHARS)
        if erased & set(block.claim_ids) or _has_terms(block.text, s.terms):
            rendered_dirty += 1
        for entry in cached_hot_memory_blocks(tenant_id=s.tenant.pk, subject_id=subject.pk):
            cached += 1
            if erased & set(entry.get("claim_ids", ())) or _has_terms(
                entry.get("text", ""), s.terms
            ):
                cached_dirty += 1
    key = cache.make_key(hot_memory_cache_prefix(tenant_id=s.tenant.pk, subject_id=0))
    return probe_result(
        "hot_memory",
        "render each touched subject's hot memory, then read every cached block under "
        f"`{key.removesuffix('0:')}<subject>:*`, looking for :erased ids and :word",
        {
            "subjects": len(s.subjects),
            "rendered_with_content": rendered_dirty,
            "cached_blocks": cached,
            "cached_with_content": cached_dirty,
        },
        rendered_dirty == 0 and cached_dirty == 0,
        per_word=len(s.terms),
    )


def _scope_unions(scopes: list[dict[str, str]]) -> list[dict[str, str]]:
    """As few scopes as cover all of these. Recall returns claims whose scope is contained
    in the asked one, so asking once in a union finds everything asking in each part
    would; only scopes giving one key different values need separate unions."""
    unions: list[dict[str, str]] = []
    for scope in scopes:
        for union in unions:
            if all(union.get(key, value) == value for key, value in scope.items()):
                union.update(scope)
                break
        else:
            unions.append(dict(scope))
    return unions


def _probe_recall(s: _Scope, claims: _ClaimsPass) -> dict[str, Any]:
    gone = s.erased | s.invalidated
    scopes: dict[int, list[dict[str, str]]] = {}
    for subject_id, scope in claims.touched_scopes:
        known = scopes.setdefault(subject_id, [{}])
        if scope not in known and len(known) < MAX_PROBED_SCOPES:
            known.append(scope)
    # A subject left with no claim but erased ones has nothing recall could rank: the
    # query-less recall still runs for it, the per-word searches would only repeat it.
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT DISTINCT subject_id FROM {_CLAIM} WHERE tenant_id = %s "  # noqa: S608
            "AND subject_id = ANY(%s) AND status <> 'erased'",
            [s.tenant.pk, [subject.pk for subject in s.subjects]],
        )
        with_claims = {row[0] for row in cursor.fetchall()}
    recalls = returned_gone = returned_for_words = 0
    for subject in s.subjects:
        words = s.terms if subject.pk in with_claims else []
        for scope in _scope_unions(scopes.get(subject.pk, [{}])):
            for query in ["", *words]:
                result = claims_recall(
                    tenant=s.tenant,
                    q=RecallQuery(
                        subject=subject, scope=scope, query=query, include_stale=True, limit=100
                    ),
                )
                recalls += 1
                returned_gone += len({str(item.claim.id) for item in result.items} & gone)
                if query:
                    # Recall fills its limit with the best legal claims; a leak is one
                    # that matches a word only the deleted content had.
                    returned_for_words += sum(1 for item in result.items if item.lexical)
    return probe_result(
        "recall",
        "claims_recall, the selector behind POST /api/v1/recall (no trace is written), for "
        "each touched subject in the union of the scopes the deleted claims had (one union "
        "per set of compatible scopes), include_stale=true, once without a query and once "
        "per :word (the words only where the subject still has claims that are not erased)",
        {
            "recalls": recalls,
            "subjects_with_claims": len(with_claims),
            "erased_or_invalidated_returned": returned_gone,
            "returned_for_words": returned_for_words,
        },
        returned_gone == 0 and returned_for_words == 0,
        per_word=len(s.terms),
    )


def _probe_traces(s: _Scope) -> dict[str, Any]:
    erased, erased_params = s.tombstoned(_ERASED)
    with_content = _still_held(s, TRACE_CONTENT)
    unredacted = _count(
        f"SELECT count(*) FROM {_TRACE} WHERE tenant_id = %s AND subject_id = ANY(%s) "  # noqa: S608
        f"AND redacted_at IS NULL AND (chosen && ARRAY{erased} OR query ILIKE ANY(%s))",
        [s.tenant.pk, [subject.pk for subject in s.subjects], *erased_params, s.patterns],
    )
    return probe_result(
        "recall_traces",
        f"{_held_query(TRACE_CONTENT, 'redacted')}; and unredacted traces of the touched "
        "subjects that chose :erased or asked for :word",
        {"redacted_checked": s.traces, "with_content": with_content, "unredacted": unredacted},
        with_content == 0 and unredacted == 0,
        per_word=len(s.terms),
    )


def _probe_audit(s: _Scope) -> dict[str, Any]:
    matches = 0
    if s.terms:
        touched, touched_params = s.tombstoned(_ERASED, _INVALIDATED, _REDACTED_EVENT, as_text=True)
        matches = _count(
            f"SELECT count(*) FROM {_AUDIT} WHERE tenant_id = %s "  # noqa: S608
            f"AND (target_id IN {touched} OR target_id = %s) "
            # Values only: the keys are memdesk's own vocabulary (`secret_kinds`…), and a
            # distinctive word that happens to be one of them is not the person's content.
            "AND (reason ILIKE ANY(%s) OR EXISTS (SELECT 1 FROM "
            "jsonb_path_query(data, 'strict $.**') AS v(item) "
            "WHERE jsonb_typeof(v.item) NOT IN ('object', 'array') "
            "AND v.item #>> '{}' ILIKE ANY(%s)))",
            [s.tenant.pk, *touched_params, str(s.deletion.pk), s.patterns, s.patterns],
        )
    return probe_result(
        "audit_log",
        "SELECT count(*) FROM accounts_auditevent WHERE target_id = ANY(:touched) AND "
        "(reason ILIKE :word OR any value inside data ILIKE :word)",
        {"matches": matches},
        matches == 0,
        per_word=len(s.terms),
    )


def _probe_replies(s: _Scope) -> dict[str, Any]:
    unredacted = _still_held(s, REPLY_CONTENT)
    matches = 0
    if s.terms:
        matches = _count(
            f"SELECT count(*) FROM {_IDEMPOTENCY} WHERE tenant_id = %s "  # noqa: S608
            "AND response_body::text ILIKE ANY(%s)",
            [s.tenant.pk, s.patterns],
        )
    return probe_result(
        "idempotency_replies",
        f"{_held_query(REPLY_CONTENT, 'erased_or_redacted')}; and "  # noqa: S608
        "SELECT count(*) FROM common_idempotencyrecord WHERE tenant_id = :tenant AND "
        "response_body::text ILIKE :word",
        {"unredacted": unredacted, "matches": matches},
        unredacted == 0 and matches == 0,
        per_word=len(s.terms),
    )


def _probe_review_topics(s: _Scope) -> dict[str, Any]:
    still = _still_held(s, REVIEW_TOPIC_CONTENT)
    return probe_result(
        "review_items",
        _held_query(REVIEW_TOPIC_CONTENT, "erased"),
        {"topics_with_content": still},
        still == 0,
    )


def deletion_probes(
    *, tenant: Tenant, deletion: DeletionRequest, terms: list[str] | None
) -> list[dict[str, Any]]:
    """Look for a deletion's content everywhere it could survive; each probe with its query,
    result and verdict. `terms` are the distinctive words (None if they were lost with an
    earlier attempt: the word searches then prove nothing and say so). Writes nothing but
    a freshly rendered hot-memory block."""
    scope = _scope(tenant=tenant, deletion=deletion, terms=list(terms or []))
    claims = _claims_pass(scope)
    return [
        _probe_words(terms),
        _probe_claims(scope, claims),
        _probe_sources(scope),
        *_probe_indexes(scope),
        _probe_events(scope),
        _probe_hot_memory(scope),
        _probe_recall(scope, claims),
        _probe_traces(scope),
        _probe_audit(scope),
        _probe_replies(scope),
        _probe_review_topics(scope),
        probe_everywhere(tenant=scope.tenant, terms=scope.terms),
    ]
