"""What one deletion reaches, planned before anything is wiped.

The plan stages the rows it will touch in a temporary table once; every
write after that is one set-based statement per table joined to it. It also
picks the deleted content's distinctive words (those no other claim of the
tenant contains), which decide which derived claims are erased and which
events and recall traces repeat the content.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db.models import Q

from memory.claims.models import Event, RecallTrace, Subject
from memory.claims.search import ngrams
from memory.claims.services.claim_inputs import WITHHELD_TEXT
from memory.privacy.models import DeletionRequest, DeletionScope
from memory.privacy.services.erasure import (
    CLAIM_TABLE,
    ERASE,
    EVENT_TABLE,
    LINEAGE_TABLE,
    SOURCE_TABLE,
    STAGED_TABLE,
    TRACE_TABLE,
    Rows,
    sql_execute,
    sql_rows,
    stage_rows,
)
from memory.privacy.terms import candidate_terms, claim_content, like_patterns, word_regex


@dataclass
class _Plan:
    roots: list[UUID]
    derived_erase: list[UUID]
    derived_invalidate: list[UUID]
    digests: dict[UUID, str]
    subjects: set[int]
    events: dict[UUID, str]
    traces: list[UUID]
    terms: list[str]


_CREATE_STAGED = (
    f"DROP TABLE IF EXISTS pg_temp.{STAGED_TABLE}; CREATE TEMPORARY TABLE {STAGED_TABLE} "
    "(id uuid NOT NULL, kind text NOT NULL, digest text NOT NULL DEFAULT '', "
    "PRIMARY KEY (kind, id)) ON COMMIT DROP"
)


def _roots(deletion: DeletionRequest) -> list[tuple[UUID, int, Any, str, str]]:
    """The claims the request names, staged as `erase` in the same statement that reads
    them: id, subject, value, text and value digest."""
    params: list[Any]
    if deletion.scope == DeletionScope.SUBJECT:
        named, params = "c.subject_id = %s", [deletion.subject_id]
    else:
        # One memory is the claim with the revisions it superseded: its own history.
        named = f"""c.id IN (
            WITH RECURSIVE chain(id, supersedes_id) AS (
                SELECT id, supersedes_id FROM {CLAIM_TABLE} WHERE tenant_id = %s AND id = %s
              UNION
                SELECT c.id, c.supersedes_id FROM {CLAIM_TABLE} c
                JOIN chain ON c.id = chain.supersedes_id
                WHERE c.tenant_id = %s AND c.subject_id = %s
            )
            SELECT id FROM chain)"""  # noqa: S608
        params = [deletion.tenant_id, deletion.claim_id, deletion.tenant_id, deletion.subject_id]
    sql_execute(_CREATE_STAGED, [])
    rows = sql_rows(
        f"""
        WITH roots AS (
            SELECT c.id, c.subject_id, c.value, c.text, c.value_digest FROM {CLAIM_TABLE} c
            WHERE c.tenant_id = %s AND c.status <> 'erased' AND {named}
        ), staged AS (
            INSERT INTO {STAGED_TABLE} (id, kind, digest)
            SELECT id, 'erase', value_digest FROM roots
        )
        SELECT * FROM roots
        """,  # noqa: S608
        [deletion.tenant_id, *params],
    )
    return [(row[0], row[1], _json(row[2]), row[3], row[4]) for row in rows]


def _lineage(*, tenant_id: int, roots: Rows) -> list[tuple[UUID, int, Any, str, str]]:
    """Every claim derived from the roots, directly or through other derived claims:
    id, subject, value, text and value digest."""
    is_root, params = roots.match("to_claim_id")
    is_root_claim, claim_params = roots.match("c.id")
    rows = sql_rows(
        f"""
        WITH RECURSIVE lineage(id) AS (
            SELECT from_claim_id FROM {LINEAGE_TABLE} WHERE {is_root}
          UNION
            SELECT l.from_claim_id FROM {LINEAGE_TABLE} l JOIN lineage ON l.to_claim_id = lineage.id
        )
        SELECT c.id, c.subject_id, c.value, c.text, c.value_digest
        FROM {CLAIM_TABLE} c JOIN lineage ON c.id = lineage.id
        WHERE c.tenant_id = %s AND c.status <> 'erased' AND NOT ({is_root_claim})
        """,  # noqa: S608
        [*params, tenant_id, *claim_params],
    )
    return [(row[0], row[1], _json(row[2]), row[3], row[4]) for row in rows]


def _json(value: str | None) -> Any:
    # Django's connections load jsonb as text; the ORM decodes it per field, raw SQL here.
    return None if value is None else json.loads(value)


_SUBJECT = Subject._meta.db_table
WITHHELD_PLACEHOLDERS = frozenset(WITHHELD_TEXT.values())
# Skill versions are text every agent of the tenant reads: a word a version uploaded
# before the deleted memory was first recorded shares is the tenant's vocabulary, not
# something it learnt from that memory. A later version may have copied the memory (a
# draft built from it, an editor's paste): its words are found there and scrubbed.
_SKILL_VERSION = "skills_skillversion"


def _distinctive(*, tenant_id: int, candidates: list[str], excluded: Rows) -> list[str]:
    """The candidates no claim outside the deletion set contains (full text or n-grams),
    no subject's name (`user:alice` stays when Alice's memories go, so "alice" is
    not a word to scrub or to find) and no text of a skill version older than the
    deleted memory."""
    if not candidates:
        return []
    grams = [" ".join(ngrams(term)) for term in candidates]
    is_excluded, params = excluded.match("c.id")
    # Each word is looked up in both GIN indexes at once (a BitmapOr), whatever the
    # statistics say. The CASE keeps the planner from turning the test into an anti-join
    # that compares every word with every other claim of the tenant (half a second once
    # another subject shares the vocabulary); IS TRUE keeps the tenant's btree out of the
    # plan, where walking the tenant's claims until one matches costs the whole walk for
    # the words wanted here: those no other claim holds.
    rows = sql_rows(
        f"""
        SELECT t.term FROM unnest(%s::text[], %s::text[]) AS t(term, grams)
        WHERE (numnode(plainto_tsquery('english', t.term)) > 0 OR t.grams <> '')
          AND CASE WHEN EXISTS (
            SELECT 1 FROM {CLAIM_TABLE} c
            WHERE ((numnode(plainto_tsquery('english', t.term)) > 0
                    AND c.search_vector @@ plainto_tsquery('english', t.term))
                OR (t.grams <> '' AND c.ngrams @> string_to_array(t.grams, ' ')::varchar[]))
              AND (c.tenant_id = %s) IS TRUE AND c.status <> 'erased' AND NOT ({is_excluded})
          ) THEN false ELSE true END
          AND NOT EXISTS (
            SELECT 1 FROM {_SUBJECT} s WHERE s.tenant_id = %s
              AND (strpos(lower(s.kind || ':' || s.ref), t.term) > 0)
          )
          AND NOT EXISTS (
            SELECT 1 FROM {_SKILL_VERSION} v WHERE v.tenant_id = %s
              AND v.created_at < (
                SELECT min(c.recorded_at) FROM {CLAIM_TABLE} c
                JOIN {STAGED_TABLE} r ON r.id = c.id AND r.kind = 'erase'
              )
              AND strpos(lower(v.body || ' ' || v.manifest::text), t.term) > 0
          )
        """,  # noqa: S608
        [candidates, grams, tenant_id, *params, tenant_id, tenant_id],
    )
    found = {row[0] for row in rows}
    held = _held_in_structured_values(
        tenant_id=tenant_id, terms=[term for term in candidates if term in found], excluded=excluded
    )
    kept = [term for term in candidates if term in found and term not in held]
    return kept[: settings.DELETION_PROBE_TERMS]


def _held_in_structured_values(*, tenant_id: int, terms: list[str], excluded: Rows) -> set[str]:
    """The words another claim holds in an object or list value (an experience's steps
    and outcome), which the search indexes leave out: one pass over those values with
    one expression finding every word as a whole word."""
    if not terms:
        return set()
    is_excluded, params = excluded.match("c.id")
    rows = sql_rows(
        f"""
        SELECT DISTINCT lower(m[2]) FROM {CLAIM_TABLE} c,
          LATERAL regexp_matches(c.value::text, %s, 'gi') AS m
        WHERE c.tenant_id = %s AND c.status <> 'erased'
          AND jsonb_typeof(c.value) IN ('object', 'array') AND NOT ({is_excluded})
        """,  # noqa: S608
        [word_regex(terms), tenant_id, *params],
    )
    return {row[0] for row in rows} & set(terms)


def _stored_text(text: str) -> str:
    # A claim the gate withheld (a secret, an ephemeral value, a class without consent)
    # keeps memdesk's placeholder, not the person's words: "withheld", "consent" or
    # "secret" would match every such claim's audit row and memdesk's own verbs.
    return "" if text in WITHHELD_PLACEHOLDERS else text


def _records_plan(deletion: DeletionRequest) -> _Plan:
    """A records deletion names its events and traces: those still unredacted, of its
    tenant and subject, are staged. No claim is erased, so there are no distinctive
    words: an expired or withdrawn record goes whole, and the words it shares with
    other rows stay theirs (a deletion of a memory is what scrubs its words)."""
    tenant_id = deletion.tenant_id
    subject = deletion.subject
    events = dict(
        Event.objects.filter(
            tenant_id=tenant_id,
            subject_id=deletion.subject_id,
            pk__in=deletion.event_ids,
            redacted_at__isnull=True,
        ).values_list("id", "digest")
    )
    traces = sorted(
        RecallTrace.objects.filter(tenant_id=tenant_id, pk__in=deletion.trace_ids)
        .filter(
            Q(subject_id=deletion.subject_id) | Q(subject__isnull=True, subject_key=subject.key)
        )
        .filter(redacted_at__isnull=True)
        .values_list("id", flat=True)
    )
    sql_execute(_CREATE_STAGED, [])
    stage_rows(
        [
            *((event, "event", digest) for event, digest in events.items()),
            *((trace, "trace", "") for trace in traces),
        ]
    )
    return _Plan(
        roots=[],
        derived_erase=[],
        derived_invalidate=[],
        digests={},
        subjects={deletion.subject_id},
        events=events,
        traces=traces,
        terms=[],
    )


def deletion_plan_make(deletion: DeletionRequest) -> _Plan:
    if deletion.scope == DeletionScope.RECORDS:
        return _records_plan(deletion)
    tenant_id = deletion.tenant_id
    roots = _roots(deletion)
    root_ids = [row[0] for row in roots]
    digests = {row[0]: row[4] for row in roots}
    subjects = {deletion.subject_id, *(row[1] for row in roots)}
    # Everything below joins the staged rows rather than passing ids around.
    lineage = _lineage(tenant_id=tenant_id, roots=ERASE) if root_ids else []
    derived_ids = [row[0] for row in lineage]
    derived: dict[UUID, tuple[int, str, str]] = {
        claim_id: (subject_id, claim_content(text=text, value=value), digest)
        for claim_id, subject_id, value, text, digest in lineage
    }
    # Also the statistics of the roots, so the planner joins them sensibly.
    stage_rows([(row[0], "derived", row[4]) for row in lineage])

    terms = _distinctive(
        tenant_id=tenant_id,
        candidates=candidate_terms(
            claim_content(text=_stored_text(row[3]), value=row[2]) for row in roots
        ),
        excluded=Rows(staged=("erase", "derived")),
    )

    # A derived claim that restates the deleted content, or rests on nothing
    # but erased claims, is erased; one that merely built on it is invalidated.
    parents: dict[UUID, set[UUID]] = {claim_id: set() for claim_id in derived}
    if derived_ids:
        for child, parent in sql_rows(
            f"SELECT from_claim_id, to_claim_id FROM {LINEAGE_TABLE} "  # noqa: S608
            f"WHERE from_claim_id IN (SELECT id FROM {STAGED_TABLE} WHERE kind = 'derived')",
            [],
        ):
            parents[child].add(parent)
    erase = set(root_ids)
    erase.update(d for d, (_, content, _) in derived.items() if any(t in content for t in terms))
    grew = True
    while grew:
        grew = False
        for claim_id, claim_parents in parents.items():
            if claim_id not in erase and claim_parents and claim_parents <= erase:
                erase.add(claim_id)
                grew = True
    derived_erase = [d for d in derived_ids if d in erase]
    derived_invalidate = [d for d in derived_ids if d not in erase]
    if derived_ids:
        sql_execute(
            f"UPDATE {STAGED_TABLE} SET kind = CASE WHEN id = ANY(%s::uuid[]) THEN 'erase' "  # noqa: S608
            "ELSE 'invalidate' END WHERE kind = 'derived'",
            [derived_erase],
        )
    for claim_id, (subject_id, _, digest) in derived.items():
        subjects.add(subject_id)
        digests[claim_id] = digest

    erase_ids = [*root_ids, *derived_erase]
    patterns = like_patterns(terms)
    events: dict[UUID, str] = {}
    if deletion.scope == DeletionScope.SUBJECT:
        events.update(
            Event.objects.filter(
                tenant_id=tenant_id, subject_id=deletion.subject_id, redacted_at__isnull=True
            ).values_list("id", "digest")
        )
    else:
        # The user's own statements behind the erased claims, and any other
        # statement of theirs that repeats the deleted content.
        events.update(
            sql_rows(
                f"SELECT e.id, e.digest FROM {SOURCE_TABLE} s "  # noqa: S608
                f"JOIN {EVENT_TABLE} e ON e.id = s.event_id "
                f"WHERE s.tenant_id = %s AND s.claim_id IN (SELECT id FROM {STAGED_TABLE} "
                "WHERE kind = 'erase') AND e.subject_id = %s AND e.redacted_at IS NULL",
                [tenant_id, deletion.subject_id],
            )
        )
        if patterns:
            events.update(
                sql_rows(
                    f"SELECT id, digest FROM {EVENT_TABLE} WHERE tenant_id = %s "  # noqa: S608
                    "AND subject_id = %s AND redacted_at IS NULL AND (text ILIKE ANY(%s) "
                    "OR body::text ILIKE ANY(%s) OR source_uri ILIKE ANY(%s))",
                    [tenant_id, deletion.subject_id, patterns, patterns, patterns],
                )
            )
    if patterns and erase_ids:
        # Agent output produced while the memory was injected, quoting it back.
        events.update(
            sql_rows(
                f"SELECT id, digest FROM {EVENT_TABLE} WHERE tenant_id = %s "  # noqa: S608
                # Most events quote nothing: testing that first spares them the
                # overlap test, which unpacks the array of every erased id on each
                # call. In a CASE, as the planner may reorder the terms of an AND.
                "AND redacted_at IS NULL AND CASE WHEN cardinality(echo_of) > 0 "
                "THEN echo_of && ARRAY(SELECT id FROM "
                f"{STAGED_TABLE} WHERE kind = 'erase') ELSE false END AND (text ILIKE ANY(%s) "
                "OR body::text ILIKE ANY(%s) OR source_uri ILIKE ANY(%s))",
                [tenant_id, patterns, patterns, patterns],
            )
        )

    traces: set[UUID] = set()
    if deletion.scope == DeletionScope.SUBJECT:
        traces.update(
            RecallTrace.objects.filter(
                tenant_id=tenant_id, subject_id=deletion.subject_id, redacted_at__isnull=True
            ).values_list("id", flat=True)
        )
    # Recalls of the touched subjects that returned an erased claim, and a recall of
    # any subject that asked for (or ranked by) the deleted words.
    traces.update(
        row[0]
        for row in sql_rows(
            f"SELECT id FROM {TRACE_TABLE} WHERE tenant_id = %s AND redacted_at IS NULL "  # noqa: S608
            f"AND ((subject_id = ANY(%s) AND chosen && ARRAY(SELECT id FROM {STAGED_TABLE} "
            "WHERE kind = 'erase')) OR query ILIKE ANY(%s) OR filters::text ILIKE ANY(%s) "
            "OR ranking::text ILIKE ANY(%s))",
            [tenant_id, sorted(subjects), patterns, patterns, patterns],
        )
    )
    stage_rows(
        [
            *((event, "event", digest) for event, digest in events.items()),
            *((trace, "trace", "") for trace in traces),
        ]
    )
    return _Plan(
        roots=root_ids,
        derived_erase=derived_erase,
        derived_invalidate=derived_invalidate,
        digests=digests,
        subjects=subjects,
        events=events,
        traces=sorted(traces),
        terms=terms,
    )
