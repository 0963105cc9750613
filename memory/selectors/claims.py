"""Reads of claims: detail, lists, the recall legal set and its ranking, hot memory."""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx
from django.conf import settings
from django.contrib.postgres.search import SearchQuery, SearchRank
from django.core.cache import cache
from django.db.models import (
    BooleanField,
    Case,
    CharField,
    Count,
    ExpressionWrapper,
    F,
    FloatField,
    Max,
    Q,
    QuerySet,
    Value,
    When,
)
from django.db.models.expressions import RawSQL
from django.utils import timezone

from accounts.models import Tenant
from memory.embedders import embedder, pgvector_installed
from memory.models import AUTHORITY_RANK_SQL, Claim, ClaimStatus, Subject
from memory.search import MATCH_THRESHOLD, matched_terms, ngrams

logger = logging.getLogger(__name__)

SEMANTIC_UNAVAILABLE = "unavailable"

EXCLUSION_REASONS = (
    "out_of_scope",
    "not_yet_valid",
    "no_longer_valid",
    "after_cutoff",
    "inactive",
    "expired",
    "stale",
)


def subject_get(*, tenant: Tenant, key: str) -> Subject | None:
    kind, _, ref = key.partition(":")
    return Subject.objects.filter(tenant=tenant, kind=kind, ref=ref).first()


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
class RecallQuery:
    subject: Subject | None
    scope: dict[str, str] = field(default_factory=dict)
    query: str = ""
    as_of: datetime | None = None
    cutoff: datetime | None = None
    kinds: list[str] = field(default_factory=list)
    limit: int = 10
    budget_chars: int | None = None
    include_stale: bool = False


@dataclass
class RecalledClaim:
    claim: Claim
    stale: bool
    rank: float
    matched: list[str]
    scope_match: str
    # Each ranking signal that placed the claim: {"fulltext": {"rank": 1, "score": 0.6}, ...}.
    signals: dict[str, dict[str, float]] = field(default_factory=dict)
    # `pgvector` or `sql` when meaning ranked the claim, else `unavailable`.
    semantic: str = SEMANTIC_UNAVAILABLE

    @property
    def lexical(self) -> bool:
        """Whether the claim shares words or n-grams with the query (not only meaning)."""
        return "fulltext" in self.signals or "ngram" in self.signals


@dataclass
class RecallResult:
    items: list[RecalledClaim]
    excluded: dict[str, int]
    used_chars: int
    # How this recall compared meanings: `pgvector`, `sql` or `unavailable`.
    semantic: str = SEMANTIC_UNAVAILABLE


def _exclusion_reason(q: RecallQuery, as_of: datetime) -> Case:
    whens = [
        When(~Q(status=ClaimStatus.ACTIVE), then=Value("inactive")),
        When(~Q(scope__contained_by=q.scope), then=Value("out_of_scope")),
        When(valid_from__gt=as_of, then=Value("not_yet_valid")),
        When(valid_to__lte=as_of, then=Value("no_longer_valid")),
    ]
    if q.cutoff is not None:
        whens.append(When(available_at__gt=q.cutoff, then=Value("after_cutoff")))
    whens.append(When(expires_at__lte=as_of, then=Value("expired")))
    if not q.include_stale:
        whens.append(When(refresh_after__lte=as_of, then=Value("stale")))
    return Case(*whens, default=Value("legal"), output_field=CharField())


def _scope_match(claim_scope: dict[str, str], request_scope: dict[str, str]) -> str:
    if claim_scope == request_scope:
        return "exact"
    return "global" if not claim_scope else "broader"


def _query_vector(query: str) -> tuple[str, Sequence[float] | None]:
    """The query's vector and the model that made it; no vector when semantic recall is off."""
    model = embedder()
    if model is None or not query.strip():
        return "", None
    try:
        return model.model, model.embed([query])[0]
    except (httpx.HTTPError, ValueError, KeyError) as exc:
        # An unreachable embeddings endpoint degrades recall to lexical, never fails it.
        logger.warning("query embedding failed", extra={"error": type(exc).__name__})
        return "", None


def _ranks(scores: dict[Any, float]) -> dict[Any, int]:
    """1 for the best score; equal scores share a rank."""
    ordered = sorted(scores.values(), reverse=True)
    first: dict[float, int] = {}
    for position, score in enumerate(ordered, start=1):
        first.setdefault(score, position)
    return {key: first[score] for key, score in scores.items()}


def _legal_set(
    *, tenant: Tenant, q: RecallQuery, as_of: datetime
) -> tuple[QuerySet[Claim], dict[str, int]]:
    """The legal claims of the subject, and the count of every claim by what excluded it."""
    subject_claims = Claim.objects.filter(tenant=tenant, subject=q.subject).exclude(
        status=ClaimStatus.ERASED
    )
    if q.kinds:
        subject_claims = subject_claims.filter(kind__in=q.kinds)

    counts = dict(
        subject_claims.annotate(exclusion=_exclusion_reason(q, as_of))
        .values_list("exclusion")
        .annotate(n=Count("id"))
        .values_list("exclusion", "n")
    )
    legal = subject_claims.filter(status=ClaimStatus.ACTIVE, scope__contained_by=q.scope).filter(
        Q(valid_from__isnull=True) | Q(valid_from__lte=as_of),
        Q(valid_to__isnull=True) | Q(valid_to__gt=as_of),
        Q(expires_at__isnull=True) | Q(expires_at__gt=as_of),
    )
    if q.cutoff is not None:
        legal = legal.filter(available_at__lte=q.cutoff)
    if not q.include_stale:
        legal = legal.filter(Q(refresh_after__isnull=True) | Q(refresh_after__gt=as_of))
    return legal, counts


def claims_recall(*, tenant: Tenant, q: RecallQuery) -> RecallResult:
    """The legal set first (tenant, subject, scope, status, time), then ranking inside it.

    One query counts every claim of the subject by the first rule that excludes
    it; one scores the whole legal set as plain rows on each signal: full text,
    n-grams, vector similarity (exact cosine in SQL: pgvector's operator, or a
    dot product over plain arrays without it), recency and authority; the last
    loads the chosen claims with their sources. The
    signals are fused by reciprocal rank, so a query returns the best legal
    claims up to `limit` even when they share no word with it. No score ever
    reaches a claim outside the legal set.
    """
    as_of = q.as_of or timezone.now()
    legal, counts = _legal_set(tenant=tenant, q=q, as_of=as_of)
    excluded = {reason: counts.get(reason, 0) for reason in EXCLUSION_REASONS}
    legal_count = counts.get("legal", 0)

    columns = ["id", "predicate", "scope_size", "recorded_at", "authority_rank"]
    legal = legal.annotate(authority_rank=AUTHORITY_RANK_SQL)
    query_grams = ngrams(q.query) if q.query.strip() else []
    if query_grams:
        search = SearchQuery(q.query, config="english", search_type="plain")
        legal = legal.annotate(
            text_rank=SearchRank(F("search_vector"), search),
            text_hit=ExpressionWrapper(Q(search_vector=search), output_field=BooleanField()),
            gram_hits=RawSQL(
                "cardinality(ARRAY(SELECT unnest(memory_claim.ngrams) "
                "INTERSECT SELECT unnest(%s::varchar[])))",
                (query_grams,),
            ),
        )
        columns += ["text_rank", "text_hit", "gram_hits"]
    model, query_vector = _query_vector(q.query) if legal_count else ("", None)
    mode = SEMANTIC_UNAVAILABLE
    if query_vector is not None:
        # Exact cosine (the vectors are unit length) of each legal claim's vector, in
        # the same query: pgvector's operator, or a dot product over the plain arrays.
        mode = "pgvector" if pgvector_installed() else "sql"
        if mode == "pgvector":
            sql = (
                "SELECT 1 - (e.vector::vector <=> %s::vector) FROM memory_claimembedding e "
                "WHERE e.claim_id = memory_claim.id AND e.model = %s"
            )
            vector_param: Any = "[" + ",".join(f"{x:.7g}" for x in query_vector) + "]"
        else:
            sql = (
                "SELECT sum(a * b) FROM memory_claimembedding e, "
                "unnest(e.vector, %s::float8[]) AS t(a, b) "
                "WHERE e.claim_id = memory_claim.id AND e.model = %s"
            )
            vector_param = [float(x) for x in query_vector]
        # `sql` is one of the two literals above; the vector and model are parameters.
        scored = RawSQL(sql, (vector_param, model), output_field=FloatField())  # noqa: S611
        legal = legal.annotate(similarity=scored)
        columns.append("similarity")
    rows = {row["id"]: row for row in legal.values(*columns)}
    similarity: dict[Any, float] = {
        i: r["similarity"] for i, r in rows.items() if r.get("similarity") is not None
    }

    signals: dict[Any, dict[str, dict[str, float]]] = {i: {} for i in rows}
    fused: dict[Any, float] = {}
    lexical: set[Any] = set()
    recency = _ranks({i: r["recorded_at"].timestamp() for i, r in rows.items()})
    authority = _ranks({i: float(r["authority_rank"]) for i, r in rows.items()})
    for i, r in rows.items():
        signals[i]["recency"] = {"rank": recency[i]}
        signals[i]["authority"] = {"rank": authority[i], "score": r["authority_rank"]}
    if query_grams:
        needed = max(1, math.ceil(len(query_grams) * MATCH_THRESHOLD))
        lexical = {i for i, r in rows.items() if r["text_hit"] or r["gram_hits"] >= needed}
        per_signal = {
            "fulltext": {i: float(r["text_rank"]) for i, r in rows.items() if r["text_hit"]},
            # Below the match threshold, shared n-grams are noise ("the", "her").
            "ngram": {
                i: r["gram_hits"] / len(query_grams)
                for i, r in rows.items()
                if r["gram_hits"] >= needed
            },
            "vector": similarity,
        }
        for name, scores in per_signal.items():
            for i, rank in _ranks(scores).items():
                signals[i][name] = {"rank": rank, "score": round(scores[i], 4)}
        weights, k = settings.RECALL_WEIGHTS, settings.RECALL_RRF_K
        for i, placed in signals.items():
            fused[i] = sum(weights[name] / (k + s["rank"]) for name, s in placed.items())
        excluded["no_match"] = legal_count - len(lexical)
    else:
        for i, r in rows.items():
            fused[i] = r["authority_rank"] * 0.05 + r["scope_size"] * 0.05

    ordered = sorted(
        rows,
        key=lambda i: (-fused[i], -rows[i]["scope_size"], -rows[i]["recorded_at"].timestamp()),
    )[: max(q.limit * 4, q.limit)]
    claims = (
        Claim.objects.filter(pk__in=ordered)
        .select_related("subject")
        .prefetch_related("sources")
        .annotate(
            stale=Case(When(refresh_after__lte=as_of, then=Value(True)), default=Value(False))
        )
        .in_bulk()
    )
    candidates = [claims[i] for i in ordered]

    # Among claims on the same predicate, the more specific scope comes first.
    best_by_predicate: dict[str, float] = {}
    for claim in candidates:
        best_by_predicate[claim.predicate] = max(
            best_by_predicate.get(claim.predicate, 0.0), fused[claim.id]
        )
    candidates.sort(
        key=lambda c: (-best_by_predicate[c.predicate], c.predicate, -c.scope_size, -fused[c.id])
    )

    items: list[RecalledClaim] = []
    used = 0
    over_budget = 0
    for claim in candidates:
        if len(items) >= q.limit:
            break
        size = len(claim.text)
        if q.budget_chars is not None and used + size > q.budget_chars:
            over_budget += 1
            continue
        used += size
        items.append(
            RecalledClaim(
                claim=claim,
                stale=bool(claim.stale),
                rank=round(fused[claim.id], 4),
                matched=matched_terms(q.query, f"{claim.predicate} {claim.text}")
                if q.query
                else [],
                scope_match=_scope_match(claim.scope, q.scope),
                signals=signals[claim.id],
                semantic=mode if claim.id in similarity else SEMANTIC_UNAVAILABLE,
            )
        )
    if q.budget_chars is not None:
        excluded["over_budget"] = over_budget
    return RecallResult(items=items, excluded=excluded, used_chars=used, semantic=mode)


@dataclass(frozen=True)
class HotMemory:
    text: str
    etag: str
    claim_ids: tuple[str, ...]


def _hot_memory_version(*, tenant: Tenant, subject: Subject) -> str:
    # Derived from the claims themselves, so no missed invalidation can serve
    # an old block: any write to a claim of the subject moves updated_at.
    row = Claim.objects.filter(tenant=tenant, subject=subject).aggregate(
        latest=Max("updated_at"), n=Count("id")
    )
    latest = row["latest"].isoformat() if row["latest"] else "-"
    return f"{latest}:{row['n']}"


def _render_hot_memory(*, tenant: Tenant, subject: Subject, budget_chars: int) -> HotMemory:
    now = timezone.now()
    claims = (
        Claim.objects.filter(tenant=tenant, subject=subject, status=ClaimStatus.ACTIVE)
        .filter(
            Q(valid_from__isnull=True) | Q(valid_from__lte=now),
            Q(valid_to__isnull=True) | Q(valid_to__gt=now),
            Q(expires_at__isnull=True) | Q(expires_at__gt=now),
            Q(refresh_after__isnull=True) | Q(refresh_after__gt=now),
        )
        .annotate(authority_rank=AUTHORITY_RANK_SQL)
        .order_by("-authority_rank", "-use_count", "-recorded_at")
        .only("id", "predicate", "text", "value", "scope")[:200]
    )
    header = f"Memory about {subject.key}:"
    lines: list[str] = []
    ids: list[str] = []
    used = len(header)
    for claim in claims:
        statement = claim.text or f"{claim.predicate}: {claim.value}"
        scope = ", ".join(f"{k}={v}" for k, v in sorted(claim.scope.items()))
        line = f"- {statement}" + (f" [{scope}]" if scope else "")
        if used + 1 + len(line) > budget_chars:
            continue
        used += 1 + len(line)
        lines.append(line)
        ids.append(str(claim.id))
    text = "\n".join([header, *lines]) if lines and len(header) <= budget_chars else ""
    etag = hashlib.sha256(text.encode()).hexdigest()[:32]
    return HotMemory(text=text, etag=etag, claim_ids=tuple(ids))


def hot_memory_cache_prefix(*, tenant_id: int, subject_id: int) -> str:
    """Every cached block of a subject starts with this, so erasure can purge them all."""
    return f"hot-memory:{tenant_id}:{subject_id}:"


def hot_memory(*, tenant: Tenant, subject: Subject, budget_chars: int) -> HotMemory:
    version = _hot_memory_version(tenant=tenant, subject=subject)
    prefix = hot_memory_cache_prefix(tenant_id=tenant.pk, subject_id=subject.pk)
    key = f"{prefix}{budget_chars}:{version}"
    cached = cache.get(key)
    if cached is not None:
        return HotMemory(**cached)
    block = _render_hot_memory(tenant=tenant, subject=subject, budget_chars=budget_chars)
    cache.set(key, {"text": block.text, "etag": block.etag, "claim_ids": block.claim_ids}, 3600)
    return block
