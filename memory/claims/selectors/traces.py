"""Reads of recall traces: one trace made readable, where a claim was used, unused recalls.

A trace keeps ids, counts and ranking signals; the claims it names are read
here as they stand now (an erased claim shows its status and no words).
A claim a trace returned is *used* when the agent reported it
(`POST /recall/traces/{id}/used`), *unused* when the agent reported uses for
that trace and left it out, and *unreported* when nothing was reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from django.db import connection
from django.db.models import QuerySet
from django.utils import timezone

from accounts.models import Tenant
from memory.claims.models import Claim, RecallTrace, RecallUse, Subject

_TRACE = RecallTrace._meta.db_table
_USE = RecallUse._meta.db_table
_CLAIM = Claim._meta.db_table
_SUBJECT = Subject._meta.db_table


def recall_trace_get(
    *, tenant: Tenant, trace_id: Any, allowed_subjects: frozenset[str] | None
) -> RecallTrace | None:
    """The tenant's trace, or None; a token limited to subjects sees only theirs."""
    trace = RecallTrace.objects.filter(tenant=tenant, pk=trace_id).first()
    if trace is None:
        return None
    if allowed_subjects is not None and trace.subject_key not in allowed_subjects:
        return None
    return trace


def _claims_by_id(*, tenant: Tenant, ids: list[str]) -> dict[str, Claim]:
    claims = (
        Claim.objects.filter(tenant=tenant, pk__in=ids)
        .select_related("subject")
        .only(
            "id",
            "predicate",
            "text",
            "status",
            "authority",
            "kind",
            "scope",
            "subject__kind",
            "subject__ref",
        )
    )
    return {str(claim.id): claim for claim in claims}


def _claim_fields(claim: Claim | None) -> dict[str, Any]:
    if claim is None:
        return {"predicate": "", "text": "", "status": "unknown", "subject": ""}
    return {
        "predicate": claim.predicate,
        "text": claim.text,
        "status": claim.status,
        "subject": claim.subject.key,
    }


def recall_trace_detail(*, tenant: Tenant, trace: RecallTrace) -> dict[str, Any]:
    """Everything a person or an agent needs to read why a recall answered as it did:
    the legal set's size and its exclusions by reason, each returned claim's signals
    and what the agent reported doing with it, the ranked candidates the limit or the
    budget cut, and the claims named, as they stand now. Three queries."""
    ranking = trace.ranking or {}
    ranked = ranking.get("items", {})
    cut = ranking.get("cut", [])
    chosen = [str(claim_id) for claim_id in trace.chosen]
    claims = _claims_by_id(tenant=tenant, ids=chosen + [entry["id"] for entry in cut])
    uses = {
        str(use.claim_id): use
        for use in RecallUse.objects.filter(tenant=tenant, trace=trace).order_by("id")
    }
    reported = bool(uses)
    returned = []
    for position, claim_id in enumerate(chosen):
        placed = ranked.get(claim_id, {})
        use = uses.get(claim_id)
        returned.append(
            {
                "id": claim_id,
                "position": position,
                "rank": placed.get("rank"),
                "signals": placed.get("signals", {}),
                "chars": placed.get("chars"),
                "relevance": placed.get("relevance"),
                **_claim_fields(claims.get(claim_id)),
                # None: the agent reported nothing for this trace, so nobody knows.
                "used": (use is not None) if reported else None,
                "cited": use.cited if use is not None else False,
                "prompt_position": use.position if use is not None else None,
            }
        )
    cut_out = [
        {
            "id": entry["id"],
            "rank": entry.get("rank"),
            "reason": entry.get("reason"),
            "chars": entry.get("chars"),
            "signals": entry.get("signals", {}),
            **_claim_fields(claims.get(entry["id"])),
        }
        for entry in cut
    ]
    excluded = dict(trace.excluded or {})
    return {
        "id": str(trace.id),
        "kind": trace.kind,
        "subject": trace.subject_key,
        "query": trace.query,
        "filters": trace.filters,
        "created_at": trace.created_at,
        "redacted": trace.redacted_at is not None,
        "duration_ms": trace.duration_ms,
        "semantic": ranking.get("semantic"),
        # Whether the evidence was enough to answer (none in traces older than abstention).
        "abstention": ranking.get("abstention"),
        "legal_set": {"legal": ranking.get("legal"), "excluded": excluded},
        # The context the agent got and its size in the embedder's tokens (none in
        # hot-memory traces and in traces written before they were kept).
        "rendered_context": ranking.get("context"),
        "context_tokens": (ranking.get("tokens") or {}).get("context"),
        "budget": {
            "budget_chars": trace.budget_chars,
            "used_chars": trace.used_chars,
            "over_budget": sum(1 for entry in cut if entry.get("reason") == "over_budget"),
            "below_limit": sum(1 for entry in cut if entry.get("reason") == "below_limit"),
        },
        "returned": returned,
        "cut": cut_out,
        "uses": [
            {
                "claim": claim_id,
                "position": use.position,
                "cited": use.cited,
                "harmful": use.harmful,
                "run_id": use.run_id,
                "task_id": use.task_id,
                "reported_at": use.reported_at,
            }
            for claim_id, use in uses.items()
        ],
    }


def claim_recall_traces(*, tenant: Tenant, claim_id: Any, limit: int = 50) -> QuerySet[RecallTrace]:
    """The newest traces whose answer held the claim ("where was this used")."""
    return RecallTrace.objects.filter(tenant=tenant, chosen__contains=[claim_id]).order_by(
        "-created_at", "-id"
    )[:limit]


@dataclass(frozen=True)
class ClaimRecall:
    """One trace that returned a claim, and what the agent reported doing with it."""

    trace: RecallTrace
    position: int  # the claim's place in the answer, 0 first
    reported: bool  # the agent reported uses for this trace
    use: RecallUse | None  # its report of this claim, if any


def claim_recall_rows(*, tenant: Tenant, claim_id: Any, limit: int = 50) -> list[ClaimRecall]:
    """The newest traces that returned the claim, each with its use; two queries."""
    traces = list(claim_recall_traces(tenant=tenant, claim_id=claim_id, limit=limit))
    uses = RecallUse.objects.filter(tenant=tenant, trace__in=traces)
    reported = {use.trace_id for use in uses}
    mine = {use.trace_id: use for use in uses if str(use.claim_id) == str(claim_id)}
    return [
        ClaimRecall(
            trace=trace,
            position=[str(c) for c in trace.chosen].index(str(claim_id)),
            reported=trace.pk in reported,
            use=mine.get(trace.pk),
        )
        for trace in traces
    ]


@dataclass(frozen=True)
class ClaimValue:
    """What a claim was worth to the agents that recalled it."""

    returned: int  # traces whose answer held it
    reported: int  # of those, traces the agent reported uses for
    used: int  # reported as put into the context
    cited: int  # reported as cited in the output
    unused: int  # returned in a reported trace and left out
    harmful: int = 0  # reported as wrong or misleading once in the context

    @property
    def unused_rate(self) -> float | None:
        return self.unused / self.reported if self.reported else None


def claim_value(*, tenant: Tenant, claim_id: Any) -> ClaimValue:
    """A claim's value signals, in one statement."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT count(*),
                   count(*) FILTER (WHERE EXISTS (SELECT 1 FROM {_USE} r
                                    WHERE r.tenant_id = t.tenant_id AND r.trace_id = t.id)),
                   count(u.id), count(u.id) FILTER (WHERE u.cited),
                   count(u.id) FILTER (WHERE u.harmful)
            FROM {_TRACE} t
            LEFT JOIN {_USE} u ON u.tenant_id = t.tenant_id AND u.trace_id = t.id
                              AND u.claim_id = %(claim)s
            WHERE t.tenant_id = %(tenant)s AND t.chosen @> ARRAY[%(claim)s]::uuid[]
            """,  # noqa: S608 - table names are constants; every value is a parameter
            {"tenant": tenant.pk, "claim": str(claim_id)},
        )
        returned, reported, used, cited, harmful = cursor.fetchone()
    return ClaimValue(
        returned=returned,
        reported=reported,
        used=used,
        cited=cited,
        unused=reported - used,
        harmful=harmful,
    )


@dataclass(frozen=True)
class UnusedRecalls:
    """Context redundancy over a window: claims handed to agents that they did not use."""

    since: datetime
    reported_traces: int
    returned: int  # claims returned in the reported traces
    unused: int
    # The claims most often returned and left out: (claim id, predicate, subject, times).
    top_unused: list[tuple[UUID, str, str, int]]

    @property
    def redundancy(self) -> float | None:
        return self.unused / self.returned if self.returned else None


def unused_recalls(*, tenant: Tenant, days: int = 14, top: int = 10) -> UnusedRecalls:
    """Across the traces of the last `days` that agents reported uses for: how many
    returned claims went unused, and which claims most often. Two statements."""
    since = timezone.now() - timedelta(days=days)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH reported AS (
                SELECT t.id, t.chosen FROM {_TRACE} t
                WHERE t.tenant_id = %(tenant)s AND t.created_at >= %(since)s
                  AND EXISTS (SELECT 1 FROM {_USE} u WHERE u.tenant_id = t.tenant_id
                                                        AND u.trace_id = t.id)
            ), returned AS (
                SELECT r.id AS trace_id, c AS claim_id FROM reported r, unnest(r.chosen) AS c
            ), unused AS (
                SELECT x.claim_id FROM returned x
                WHERE NOT EXISTS (SELECT 1 FROM {_USE} u WHERE u.tenant_id = %(tenant)s
                                    AND u.trace_id = x.trace_id AND u.claim_id = x.claim_id)
            )
            SELECT (SELECT count(*) FROM reported), (SELECT count(*) FROM returned),
                   (SELECT count(*) FROM unused)
            """,  # noqa: S608 - table names are constants; every value is a parameter
            {"tenant": tenant.pk, "since": since},
        )
        reported, returned, unused = cursor.fetchone()
        cursor.execute(
            f"""
            WITH returned AS (
                SELECT t.id AS trace_id, c AS claim_id FROM {_TRACE} t, unnest(t.chosen) AS c
                WHERE t.tenant_id = %(tenant)s AND t.created_at >= %(since)s
                  AND EXISTS (SELECT 1 FROM {_USE} u WHERE u.tenant_id = t.tenant_id
                                                        AND u.trace_id = t.id)
                  AND NOT EXISTS (SELECT 1 FROM {_USE} u WHERE u.tenant_id = t.tenant_id
                                    AND u.trace_id = t.id AND u.claim_id = c)
            )
            SELECT c.id, c.predicate, s.kind || ':' || s.ref, count(*) AS n
            FROM returned x JOIN {_CLAIM} c ON c.tenant_id = %(tenant)s AND c.id = x.claim_id
            JOIN {_SUBJECT} s ON s.id = c.subject_id
            GROUP BY c.id, c.predicate, s.kind, s.ref
            ORDER BY n DESC, c.id LIMIT %(top)s
            """,  # noqa: S608 - table names are constants; every value is a parameter
            {"tenant": tenant.pk, "since": since, "top": top},
        )
        rows = [(row[0], row[1], row[2], row[3]) for row in cursor.fetchall()]
    return UnusedRecalls(
        since=since, reported_traces=reported, returned=returned, unused=unused, top_unused=rows
    )
