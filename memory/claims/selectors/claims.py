"""Reads of claims: detail, lists, the recall legal set and its ranking, hot memory."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.db.models import Q, QuerySet
from django.utils import timezone

from accounts.models import Tenant
from common.rows import RowReader, fetch_bound
from memory.claims.embedders import NUMPY_SIMILARITY, PACKED_DTYPE, embedder
from memory.claims.models import Claim, ClaimSource, ClaimStatus, Subject
from memory.claims.search import MATCH_THRESHOLD, matched_terms, ngrams, searchable_text
from memory.claims.selectors.asked_attributes import asked_similarity
from memory.claims.selectors.predicate_topics import topic_similarities
from memory.claims.selectors.recall_abstention import Verdict, identifier_grams, recall_verdict
from memory.claims.selectors.recall_ranking import (
    CLAIM_TABLE,
    ID_POSITION,
    RECALLED,
    Ranked,
    RecallQuery,
    fused_candidates,
    query_vector_future,
    ranking_sql,
    recalled_claim,
    vector_similarities,
)
from reviews.models import ItemStatus, Queue, ReviewItem

SEMANTIC_UNAVAILABLE = "unavailable"

EXCLUSION_REASONS = (
    "out_of_scope",
    "not_yet_valid",
    "no_longer_valid",
    "after_cutoff",
    "event_after_cutoff",
    "inactive",
    "expired",
    "stale",
)


_SUBJECT = RowReader(Subject, alias="s")
_SUBJECT_BY_KEY = f"""
    SELECT {_SUBJECT.columns} FROM {Subject._meta.db_table} s
    WHERE s.tenant_id = %s AND s.kind = %s AND s.ref = %s
"""  # noqa: S608 - the table name is a constant; every value is a parameter


def subject_get(*, tenant: Tenant, key: str) -> Subject | None:
    """The tenant's subject `kind:ref` (one by the unique constraint), read with fixed SQL:
    every agent call that names a subject asks."""
    kind, _, ref = key.partition(":")
    return _SUBJECT.one(_SUBJECT_BY_KEY, [tenant.pk, kind, ref])


def claims_visible(*, tenant: Tenant, allowed_subjects: frozenset[str] | None) -> QuerySet[Claim]:
    """Claims of the tenant that the caller may see (a token may be limited to subjects)."""
    claims = Claim.objects.filter(tenant=tenant).select_related("subject")
    if allowed_subjects is not None:
        subject_filter = Q(pk__in=[])
        for key in allowed_subjects:
            kind, _, ref = key.partition(":")
            subject_filter |= Q(subject__kind=kind, subject__ref=ref)
        claims = claims.filter(subject_filter)
    return claims


def claim_get(
    *, tenant: Tenant, claim_id: Any, allowed_subjects: frozenset[str] | None
) -> Claim | None:
    return (
        claims_visible(tenant=tenant, allowed_subjects=allowed_subjects)
        .prefetch_related("sources", "derived_from", "derivatives")
        .filter(pk=claim_id)
        .first()
    )


def claim_history(*, claim: Claim) -> QuerySet[Claim]:
    """Every revision on the claim's identity, oldest first."""
    return Claim.objects.filter(
        tenant_id=claim.tenant_id,
        subject_id=claim.subject_id,
        predicate=claim.predicate,
        scope_key=claim.scope_key,
    ).order_by("revision", "recorded_at")


@dataclass
class RecalledClaim:
    claim: Claim
    stale: bool
    rank: float
    matched: list[str]
    scope_match: str
    # Each ranking signal that placed the claim: {"fulltext": {"rank": 1, "score": 0.6}, ...}.
    signals: dict[str, dict[str, float]] = field(default_factory=dict)
    # `numpy` when meaning ranked the claim (what computed its similarity), else
    # `unavailable`.
    semantic: str = SEMANTIC_UNAVAILABLE
    # The open conflict on the claim's identity, if any: {"id", "other", "other_side_summary"}.
    conflict: dict[str, Any] | None = None
    # Where the claim came from, oldest first.
    sources: list[ClaimSource] = field(default_factory=list)
    # `strong` or `weak` evidence that it is about the question; none without a query.
    relevance: str | None = None

    @property
    def lexical(self) -> bool:
        """Whether the claim shares words or n-grams with the query (not only meaning)."""
        return "fulltext" in self.signals or "ngram" in self.signals


# Why a ranked candidate of the legal set was not returned.
CUT_OVER_BUDGET = "over_budget"  # its text did not fit in what was left of `budget_chars`
CUT_BELOW_LIMIT = "below_limit"  # `limit` items ranked above it were returned
CUT_BELOW_FLOOR = "below_floor"  # recall abstained: no candidate reached the relevance floor


@dataclass
class CutCandidate:
    """A legal claim that was ranked among the candidates but not returned, and why."""

    claim_id: Any
    subject_id: int
    chars: int
    rank: float
    reason: str
    signals: dict[str, dict[str, float]] = field(default_factory=dict)


@dataclass
class RecallResult:
    items: list[RecalledClaim]
    excluded: dict[str, int]
    used_chars: int
    # What compared meanings in this recall: `numpy`, or `unavailable`.
    semantic: str = SEMANTIC_UNAVAILABLE
    # How many claims of the subject were legal, and the ranked candidates not returned.
    legal: int = 0
    cut: list[CutCandidate] = field(default_factory=list)
    # Per subject id, for a cross-subject recall: its exclusion counts and legal claims.
    excluded_by_subject: dict[int, dict[str, int]] = field(default_factory=dict)
    legal_by_subject: dict[int, int] = field(default_factory=dict)
    # Whether the evidence was enough to answer (docs/recall.md, "Abstention").
    verdict: Verdict | None = None

    @property
    def abstained(self) -> bool:
        return self.verdict is not None and self.verdict.abstained


def _scope_match(claim_scope: dict[str, str], request_scope: dict[str, str]) -> str:
    if claim_scope == request_scope:
        return "exact"
    return "global" if not claim_scope else "broader"


_SOURCE = RowReader(ClaimSource, alias="s")
# The returned claims' columns and their sources (a row per source, oldest first; one
# with none for a claim without), in one statement by primary key.
_RETURNED_CLAIMS = f"""
    SELECT {RECALLED.columns}, {_SOURCE.columns}
    FROM {CLAIM_TABLE} c
    LEFT JOIN {ClaimSource._meta.db_table} s ON s.claim_id = c.id AND s.tenant_id = c.tenant_id
    WHERE c.tenant_id = %(tenant)s AND c.id = ANY(%(returned)s::uuid[])
    ORDER BY s.id
"""  # noqa: S608 - table names are constants; every value is a parameter


def _returned_claims(
    params: dict[str, Any], claim_ids: list[Any], subjects: dict[int, Subject]
) -> dict[Any, tuple[Claim, list[ClaimSource]]]:
    """The claims a recall returns, built as the ORM would, with their sources, by id."""
    found: dict[Any, tuple[Claim, list[ClaimSource]]] = {}
    if not claim_ids:
        return found
    for row in fetch_bound(_RETURNED_CLAIMS, {**params, "returned": claim_ids}):
        claim_id = row[ID_POSITION]
        if claim_id not in found:
            found[claim_id] = (recalled_claim(row, subjects), [])
        if row[RECALLED.width] is not None:
            found[claim_id][1].append(_SOURCE.build(row, RECALLED.width))
    return found


def recall_subjects(q: RecallQuery) -> list[Subject]:
    """The subjects a recall reads: every one named, or its one subject."""
    if q.subjects:
        return list(q.subjects)
    return [q.subject] if q.subject is not None else []


def ranking_params(*, tenant: Tenant, q: RecallQuery) -> dict[str, Any]:
    """The ranking statement's values for `q` (`ranking_sql`), all but the embedding model."""
    as_of = q.as_of or timezone.now()
    query_grams = ngrams(q.query) if q.query.strip() else []
    params: dict[str, Any] = {
        "tenant": tenant.pk,
        "subjects": [subject.pk for subject in recall_subjects(q)],
        "scope": json.dumps(q.scope),
        "as_of": as_of,
        "cutoff": q.cutoff,
        "kinds": list(q.kinds),
        "query": q.query,
        "grams": query_grams,
        "identifier_grams": identifier_grams(q.query),
        # Below the match threshold, shared n-grams are noise ("the", "her").
        "needed": max(1, math.ceil(len(query_grams) * MATCH_THRESHOLD)),
        "hidden": [str(claim_id) for claim_id in q.hidden],
        "made_stale": [str(claim_id) for claim_id in q.made_stale],
    }
    for claim_id, (text, value) in q.corrected.items():
        predicate = (
            Claim.objects.filter(tenant=tenant, pk=claim_id)
            .values_list("predicate", flat=True)
            .first()
            or ""
        )
        document = searchable_text(predicate=predicate, text=text, value=value)
        params.update(
            corrected=str(claim_id), corrected_document=document, corrected_grams=ngrams(document)
        )
    return params


def claims_recall(*, tenant: Tenant, q: RecallQuery) -> RecallResult:
    """The legal set first (tenant, subject, scope, status, time), then ranking inside it.

    Two statements. While the query is embedded on a helper thread, the first counts
    every claim of the subject by the first rule that excludes it, scores and ranks the
    legal set on full text, n-grams, recency and authority, and reads the packed vectors
    of the subject's active claims. Here the query's vector gives each legal claim its
    exact cosine similarity (less its hubness) and its rank, the ranks are fused
    (reciprocal rank fusion, so a query returns the best legal claims up to `limit` even
    when they share no word with it) and the candidates ordered and cut; the second
    statement reads the returned claims and their sources. No score ever reaches a claim
    outside the legal set.
    """
    params = ranking_params(tenant=tenant, q=q)
    query_grams: list[str] = params["grams"]
    mode = SEMANTIC_UNAVAILABLE
    model = embedder()
    embedding = None
    if model is not None and q.query.strip():
        params["model"] = model.model
        # Embedded while the ranking statement runs (see `_EMBEDDING_THREADS`).
        embedding = query_vector_future(q.query)
    lexical = bool(query_grams)
    rows = fetch_bound(
        ranking_sql(q=q, lexical=lexical, vectors=embedding is not None), params, binary=True
    )
    subjects_by_id = {subject.pk: subject for subject in recall_subjects(q)}

    reasons, claim_counts, matching = rows[0][0] or [], rows[0][1] or [], rows[0][2]
    counted_subjects = rows[0][3] or []
    counts: dict[str, int] = {}
    by_subject: dict[int, dict[str, int]] = {}
    for reason, n, subject_id in zip(reasons, claim_counts, counted_subjects, strict=True):
        counts[reason] = counts.get(reason, 0) + n
        by_subject.setdefault(subject_id, {})[reason] = n
    excluded = {reason: counts.get(reason, 0) for reason in EXCLUSION_REASONS}
    if q.hidden:
        excluded["hidden"] = counts.get("hidden", 0)
    legal_count = counts.get("legal", 0)
    if query_grams:
        excluded["no_match"] = legal_count - matching

    legal = [Ranked(*row[4:19]) for row in rows if row[5] is not None]
    asked: float | None = None
    if embedding is not None:
        model_name, query_vector = embedding.result()
        if query_vector is not None and model_name == params["model"]:
            # numpy computes every similarity from the packed copies (one read, and the
            # hubness correction needs them here), with or without pgvector: the answer
            # names the engine that did the maths (docs/recall.md).
            mode = NUMPY_SIMILARITY
            packed = [row for row in rows if row[19] is not None]
            matrix = np.frombuffer(b"".join(row[19] for row in packed), dtype=PACKED_DTYPE)
            cosines, similarities = vector_similarities(
                matrix.reshape(len(packed), -1) if packed else matrix.reshape(0, 0),
                query_vector,
            )
            by_id = dict(zip((row[4] for row in packed), similarities, strict=False))
            cosine_by_id = dict(zip((row[4] for row in packed), cosines, strict=False))
            corrected = {str(claim_id) for claim_id in q.corrected}
            for r in legal:
                if str(r.id) not in corrected:
                    r.similarity = by_id.get(r.id)
                    r.cosine = cosine_by_id.get(r.id)
            topics = topic_similarities(
                (r.predicate for r in legal), model_name=model_name, query_vector=query_vector
            )
            for r in legal:
                r.topic = topics.get(r.predicate)
            asked = asked_similarity(model_name=model_name, query_vector=query_vector)
    if not legal_count:
        mode = SEMANTIC_UNAVAILABLE
    verdict = recall_verdict(legal=legal, query=q.query, has_question=lexical, asked=asked)
    ranked = fused_candidates(legal, lexical=lexical, limit=max(q.limit * 4, q.limit))
    for r in ranked:
        r.corrected = q.corrected.get(r.id) or q.corrected.get(str(r.id))
        if r.corrected is not None:
            r.chars = len(r.corrected[0])
        placed = r.signals
        placed["recency"] = {"rank": r.recency_rank}
        placed["authority"] = {"rank": r.authority_pos, "score": r.authority_rank}
        if query_grams:
            if r.fulltext_rank is not None and r.text_rank is not None:
                placed["fulltext"] = {"rank": r.fulltext_rank, "score": round(r.text_rank, 4)}
            if r.ngram_rank is not None:
                placed["ngram"] = {
                    "rank": r.ngram_rank,
                    "score": round(r.gram_hits / len(query_grams), 4),
                }
            if r.vector_rank is not None and r.similarity is not None:
                placed["vector"] = {"rank": r.vector_rank, "score": round(r.similarity, 4)}

    # Among claims on the same predicate, the more specific scope comes first.
    best_by_predicate: dict[str, float] = {}
    for r in ranked:
        best_by_predicate[r.predicate] = max(best_by_predicate.get(r.predicate, 0.0), r.fused)
    ranked.sort(
        key=lambda r: (-best_by_predicate[r.predicate], r.predicate, -r.scope_size, -r.fused)
    )

    # Only the claims returned are read and built as model instances; a cut candidate's
    # trace entry needs its id, subject and size.
    returned: list[Ranked] = []
    cut: list[CutCandidate] = []
    used = 0
    over_budget = 0
    for r in ranked:
        reason = None
        if verdict.abstained:
            reason = CUT_BELOW_FLOOR
        elif len(returned) >= q.limit:
            reason = CUT_BELOW_LIMIT
        elif q.budget_chars is not None and used + r.chars > q.budget_chars:
            over_budget += 1
            reason = CUT_OVER_BUDGET
        if reason is not None:
            cut.append(
                CutCandidate(
                    claim_id=r.id,
                    subject_id=r.subject_id,
                    chars=r.chars,
                    rank=round(r.fused, 4),
                    reason=reason,
                    signals=r.signals,
                )
            )
            continue
        used += r.chars
        returned.append(r)
    claims = _returned_claims(params, [r.id for r in returned], subjects_by_id)
    items: list[RecalledClaim] = []
    for r in returned:
        claim, sources = claims[r.id]
        if r.corrected is not None:
            claim.text, claim.value = r.corrected
        items.append(
            RecalledClaim(
                claim=claim,
                stale=bool(r.stale),
                rank=round(r.fused, 4),
                matched=matched_terms(q.query, f"{claim.predicate} {claim.text}")
                if q.query
                else [],
                scope_match=_scope_match(claim.scope, q.scope),
                signals=r.signals,
                semantic=mode if r.similarity is not None else SEMANTIC_UNAVAILABLE,
                sources=sources,
                relevance=verdict.relevance(r.relevance),
            )
        )
    conflicts = open_conflicts(tenant=tenant, claims=[item.claim for item in items])
    for item in items:
        item.conflict = conflicts.get(item.claim.id)
    if q.budget_chars is not None:
        excluded["over_budget"] = over_budget
    return RecallResult(
        items=items,
        excluded=excluded,
        used_chars=used,
        semantic=mode,
        legal=legal_count,
        cut=cut,
        excluded_by_subject={
            subject_id: {reason: per_reason.get(reason, 0) for reason in EXCLUSION_REASONS}
            for subject_id, per_reason in by_subject.items()
        },
        legal_by_subject={
            subject_id: per_reason.get("legal", 0) for subject_id, per_reason in by_subject.items()
        },
        verdict=verdict,
    )


CONFLICT_SUMMARY_CHARS = 200


def open_conflicts(*, tenant: Tenant, claims: Sequence[Claim]) -> dict[Any, dict[str, Any]]:
    """For each claim with an unresolved contradiction on its identity: the open review
    item that holds it (`id`, null when no person has been asked yet), the other side's
    claim id (`other`) and what the other side says (`other_side_summary`).

    No query unless a claim has a conflict; then two, whatever the number of claims.
    """
    contested = [claim for claim in claims if claim.conflicts_with]
    if not contested:
        return {}
    other_ids = {other for claim in contested for other in claim.conflicts_with}
    others = {
        other.id: other
        for other in Claim.objects.filter(tenant=tenant, pk__in=other_ids)
        .exclude(status=ClaimStatus.ERASED)
        .only("id", "predicate", "value", "text")
    }
    targets = {str(claim.id) for claim in contested} | {str(other) for other in other_ids}
    items = dict(
        ReviewItem.objects.filter(
            tenant=tenant,
            queue=Queue.CONFLICTS,
            target_type="claim",
            target_id__in=targets,
            status__in=[ItemStatus.OPEN, ItemStatus.CLAIMED],
        ).values_list("target_id", "id")
    )
    found: dict[Any, dict[str, Any]] = {}
    for claim in contested:
        other_id = next((o for o in claim.conflicts_with if o in others), None)
        if other_id is None:
            continue  # the other side was erased: nothing left to contradict it
        other = others[other_id]
        summary = other.text or f"{other.predicate}: {other.value}"
        item_id = items.get(str(other_id)) or items.get(str(claim.id))
        found[claim.id] = {
            "id": str(item_id) if item_id is not None else None,
            "other": str(other_id),
            "other_side_summary": summary[:CONFLICT_SUMMARY_CHARS],
        }
    return found
