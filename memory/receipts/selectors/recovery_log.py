"""Reading recovery's log: answers (with their latest verdict) and the figures over them."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from django.db import connection
from django.db.models import F, OuterRef, Q, QuerySet, Subquery

from accounts.actors import Actor
from accounts.models import Tenant
from memory.receipts.models.recovery_log import RecoveryAnswerRecord, RecoveryVerdict
from memory.receipts.selectors.receipts import reach

# The latency percentiles are taken over each tenant's most recent answers.
LATENCY_SAMPLES = 10_000


class VerdictFilter:
    UNJUDGED = "unjudged"
    CONFIRMED = "confirmed"
    OVERTURNED = "overturned"
    CHOICES = (UNJUDGED, CONFIRMED, OVERTURNED)


def _with_latest_verdict(
    queryset: QuerySet[RecoveryAnswerRecord],
) -> QuerySet[RecoveryAnswerRecord]:
    latest = RecoveryVerdict.objects.filter(answer=OuterRef("pk")).order_by("-created_at", "-pk")
    return queryset.annotate(
        expected=Subquery(latest.values("expected")[:1]),
        verdict_source=Subquery(latest.values("source")[:1]),
        verdict_by=Subquery(latest.values("actor_label")[:1]),
        verdict_note=Subquery(latest.values("note")[:1]),
    )


def recovery_answers_query(
    *, tenant: Tenant, actor: Actor, decision: str = "", task_key: str = "", verdict: str = ""
) -> QuerySet[RecoveryAnswerRecord]:
    """The answers `actor` reaches, each with its latest verdict (`expected`,
    `verdict_source`, `verdict_by`, `verdict_note`; None when unjudged). A token
    reaches only the answers it was given, as with checkpoints."""
    rows = RecoveryAnswerRecord.objects.filter(reach(actor), tenant=tenant)
    if decision:
        rows = rows.filter(decision=decision)
    if task_key:
        rows = rows.filter(task_key=task_key)
    rows = _with_latest_verdict(rows)
    # `expected` is the annotation above (Q, since the type checker knows only fields).
    if verdict == VerdictFilter.UNJUDGED:
        rows = rows.filter(Q(expected__isnull=True))
    elif verdict == VerdictFilter.CONFIRMED:
        rows = rows.filter(Q(expected=F("decision")))
    elif verdict == VerdictFilter.OVERTURNED:
        rows = rows.filter(Q(expected__isnull=False) & ~Q(expected=F("decision")))
    return rows


def recovery_answers(
    *, tenant: Tenant, actor: Actor, before: int | None = None, limit: int = 50, **filters: str
) -> list[RecoveryAnswerRecord]:
    """The newest answers first, keyset on id (the console's page)."""
    rows = recovery_answers_query(tenant=tenant, actor=actor, **filters)
    if before is not None:
        rows = rows.filter(pk__lt=before)
    return list(rows.order_by("-pk")[:limit])


def recovery_answer_get(
    *, tenant: Tenant, actor: Actor, answer_id: int | str
) -> RecoveryAnswerRecord | None:
    try:
        pk = int(answer_id)
    except (TypeError, ValueError):
        return None
    return (
        _with_latest_verdict(RecoveryAnswerRecord.objects.filter(reach(actor), tenant=tenant))
        .filter(pk=pk)
        .first()
    )


def recovery_verdicts(*, answer: RecoveryAnswerRecord) -> list[RecoveryVerdict]:
    return list(answer.verdicts.order_by("-created_at", "-pk"))


@dataclass
class RecoveryFigures:
    """One tenant's recovery figures, all from the log."""

    answers_by_outcome: dict[tuple[str, str], int] = field(default_factory=dict)
    timed: int = 0
    latency_p50: float | None = None
    latency_p95: float | None = None
    judged: int = 0
    correct: int = 0

    @property
    def answers(self) -> int:
        return sum(self.answers_by_outcome.values())

    @property
    def correctness(self) -> float | None:
        return self.correct / self.judged if self.judged else None


def recovery_figures(*, tenant: Tenant | None) -> dict[int, RecoveryFigures]:
    """Per tenant id (one tenant's, or every tenant's): answers by decision and reason,
    nearest-rank p50/p95 latency over the last `LATENCY_SAMPLES` answers, and how many
    judged answers were right (the latest verdict of each counts). Three statements."""
    figures: dict[int, RecoveryFigures] = defaultdict(RecoveryFigures)
    only = "AND a.tenant_id = %(tenant)s" if tenant is not None else ""
    params = {"tenant": tenant.pk if tenant is not None else None, "samples": LATENCY_SAMPLES}
    answers = RecoveryAnswerRecord._meta.db_table
    verdicts = RecoveryVerdict._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT a.tenant_id, a.decision, a.reason, count(*) FROM {answers} a "  # noqa: S608
            f"WHERE true {only} GROUP BY 1, 2, 3",
            params,
        )
        for tenant_id, decision, reason, count in cursor.fetchall():
            figures[tenant_id].answers_by_outcome[(decision, reason)] = count
        # Nearest rank, as percentile_disc takes it: the smallest latency at least
        # that share of the samples does not exceed.
        cursor.execute(
            f"""
            SELECT tenant_id, count(*),
                   percentile_disc(0.5) WITHIN GROUP (ORDER BY latency_seconds),
                   percentile_disc(0.95) WITHIN GROUP (ORDER BY latency_seconds)
            FROM (
                SELECT a.tenant_id, a.latency_seconds,
                       row_number() OVER (PARTITION BY a.tenant_id ORDER BY a.id DESC) AS n
                FROM {answers} a WHERE true {only}
            ) recent
            WHERE n <= %(samples)s
            GROUP BY tenant_id
            """,  # noqa: S608 - table names are constants; values are parameters
            params,
        )
        for tenant_id, timed, p50, p95 in cursor.fetchall():
            figures[tenant_id].timed = timed
            figures[tenant_id].latency_p50 = p50
            figures[tenant_id].latency_p95 = p95
        cursor.execute(
            f"""
            SELECT a.tenant_id, count(*), count(*) FILTER (WHERE v.expected = a.decision)
            FROM {answers} a
            JOIN LATERAL (
                SELECT expected FROM {verdicts} WHERE answer_id = a.id
                ORDER BY created_at DESC, id DESC LIMIT 1
            ) v ON true
            WHERE true {only}
            GROUP BY a.tenant_id
            """,  # noqa: S608 - table names are constants; values are parameters
            params,
        )
        for tenant_id, judged, correct in cursor.fetchall():
            figures[tenant_id].judged = judged
            figures[tenant_id].correct = correct
    return dict(figures)


def recovery_decision_counts(*, tenant: Tenant | None = None) -> Counter[tuple[str, str]]:
    """How often each (decision, reason) was answered: one tenant's, or every tenant's
    (an outcome never answered counts 0)."""
    counts: Counter[tuple[str, str]] = Counter()
    for figures in recovery_figures(tenant=tenant).values():
        counts.update(figures.answers_by_outcome)
    return counts
