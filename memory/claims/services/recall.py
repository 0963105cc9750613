"""A recall: run the selector, then record the trace and the use. Nothing else changes.

The answer does not wait for the record. The trace id is made here, returned
with the answer, and the row (with the chosen claims' use counts) is written
by a Celery task enqueued after commit — in a request, once the response has
been sent — from a pending row the recall inserted (`RECALL_TRACE_WRITE=outbox`,
the default) or from the message alone (`worker`); or in the request before the
answer (`inline`). All write through `recall_trace_record`, one transaction.

What may be lost, and what may not: a recall reads memory and changes none of
it, so the record is the only thing a crash, a lost message or a broker outage
can lose — in `worker` mode the trace and one use count, never a claim, an event
or a receipt; in `outbox` mode nothing: the pending row waits for beat's sweep.
A redelivered message writes nothing twice: the trace id is the row's primary
key, and the use counts move only in the statement whose insert created it.
"""

from __future__ import annotations

import functools
import json
import logging
import time
import uuid
from collections.abc import Sequence
from contextvars import ContextVar
from datetime import datetime
from typing import Any

from celery import current_app
from django.conf import settings
from django.core.signals import request_finished, request_started
from django.db import connection, transaction
from django.dispatch import receiver
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import ActorKind, Tenant
from common.problems import Problem
from common.screen import find_secrets_in_text, find_secrets_in_value
from memory.claims.models import Claim, PendingTrace, RecallTrace, Subject, TraceKind
from memory.claims.selectors.claims import (
    EXCLUSION_REASONS,
    CutCandidate,
    RecalledClaim,
    RecallResult,
    claims_recall,
)
from memory.claims.selectors.recall_ranking import RecallQuery
from memory.claims.trace_tokens import TOKENIZER, context_tokens

_TRACE = RecallTrace._meta.db_table
_CLAIM = Claim._meta.db_table


@functools.cache
def _deletions_table() -> str:
    # A subject's deletions are recorded by memory.privacy, which builds on claims
    # (docs/architecture.md, "Layers"): the table is found through the relation its
    # model declares on Subject, not by importing it.
    deletion = Subject._meta.get_field("deletions").related_model
    assert isinstance(deletion, type)  # a model class, once the apps are loaded
    return deletion._meta.db_table


logger = logging.getLogger(__name__)


def recall_run(
    *,
    tenant: Tenant,
    actor: Actor,
    subject_key: str,
    q: RecallQuery,
    trace_write: str | None = None,
) -> tuple[RecallResult, uuid.UUID]:
    """Recall for `q.subject`; a subject memdesk has never heard of recalls nothing.

    Returns the result and the id of its trace. `trace_write` overrides
    `RECALL_TRACE_WRITE` for callers that read the trace next in the same process.
    """
    started = time.perf_counter()
    recalled_at = timezone.now()
    _refuse_secrets(subject_keys=[subject_key], q=q)
    if q.subject is None:
        result = RecallResult(items=[], excluded=dict.fromkeys(EXCLUSION_REASONS, 0), used_chars=0)
    else:
        result = claims_recall(tenant=tenant, q=q)
    trace_id = uuid.uuid4()
    trace = _trace(
        trace_id=trace_id,
        tenant=tenant,
        actor=actor,
        subject=q.subject,
        subject_key=subject_key,
        q=q,
        items=result.items,
        cut=result.cut,
        excluded=result.excluded,
        legal=result.legal,
        result=result,
        started=started,
        recalled_at=recalled_at,
    )
    trace_write_out(trace=trace, trace_write=trace_write)
    return result, trace_id


def recall_run_across(
    *,
    tenant: Tenant,
    actor: Actor,
    subjects: list[Subject],
    q: RecallQuery,
    trace_write: str | None = None,
) -> tuple[RecallResult, dict[str, uuid.UUID]]:
    """One recall over several subjects: a single legal set and ranking across them.

    Each subject gets a trace of its own (its returned claims, its cut candidates, its
    exclusion counts), so a deletion of one subject finds and redacts exactly what is
    about it, as for a one-subject recall. Returns the result and each subject's trace id.
    """
    started = time.perf_counter()
    recalled_at = timezone.now()
    _refuse_secrets(subject_keys=[subject.key for subject in subjects], q=q)
    q.subjects = list(subjects)
    q.subject = subjects[0] if subjects else None
    result = claims_recall(tenant=tenant, q=q)
    trace_ids: dict[str, uuid.UUID] = {}
    for subject in subjects:
        trace_ids[subject.key] = uuid.uuid4()
        trace = _trace(
            trace_id=trace_ids[subject.key],
            tenant=tenant,
            actor=actor,
            subject=subject,
            subject_key=subject.key,
            q=q,
            items=[item for item in result.items if item.claim.subject_id == subject.pk],
            cut=[cut for cut in result.cut if cut.subject_id == subject.pk],
            excluded=result.excluded_by_subject.get(
                subject.pk, dict.fromkeys(EXCLUSION_REASONS, 0)
            ),
            legal=result.legal_by_subject.get(subject.pk, 0),
            result=result,
            started=started,
            recalled_at=recalled_at,
        )
        trace_write_out(trace=trace, trace_write=trace_write)
    return result, trace_ids


def _refuse_secrets(*, subject_keys: list[str], q: RecallQuery) -> None:
    # The trace keeps the query and the filters, so a credential in them is refused.
    if (
        any(find_secrets_in_text(key) for key in subject_keys)
        or find_secrets_in_text(q.query)
        or find_secrets_in_value(q.scope)
    ):
        raise Problem(
            "secret_detected",
            "The recall query, subject or scope contains what looks like a credential. "
            "Nothing was recalled or stored; memdesk never stores secrets.",
        )


def _trace(
    *,
    trace_id: uuid.UUID,
    tenant: Tenant,
    actor: Actor,
    subject: Subject | None,
    subject_key: str,
    q: RecallQuery,
    items: list[RecalledClaim],
    cut: list[CutCandidate],
    excluded: dict[str, int],
    legal: int,
    result: RecallResult,
    started: float,
    recalled_at: datetime,
) -> dict[str, Any]:
    """The trace row of one subject's part of a recall, as the worker's message carries it."""
    return {
        "id": str(trace_id),
        "tenant_id": tenant.pk,
        "subject_id": subject.pk if subject else None,
        "subject_key": subject_key,
        "token_id": int(actor.id) if actor.kind == ActorKind.AGENT else None,
        "query": q.query,
        "filters": {
            "scope": q.scope,
            "as_of": q.as_of.isoformat() if q.as_of else None,
            "cutoff": q.cutoff.isoformat() if q.cutoff else None,
            "kinds": q.kinds,
            "limit": q.limit,
            "include_stale": q.include_stale,
        },
        "excluded": excluded,
        "chosen": [str(item.claim.id) for item in items],
        "budget_chars": q.budget_chars,
        "used_chars": sum(len(item.claim.text) for item in items),
        "duration_ms": round((time.perf_counter() - started) * 1000, 2),
        "ranking": {
            "semantic": result.semantic,
            "legal": legal,
            "items": {
                str(item.claim.id): {
                    "rank": item.rank,
                    "signals": item.signals,
                    "chars": len(item.claim.text),
                    "relevance": item.relevance,
                }
                for item in items
            },
            # The ranked candidates that were not returned, best first, and why.
            "cut": [
                {
                    "id": str(entry.claim_id),
                    "rank": entry.rank,
                    "reason": entry.reason,
                    "chars": entry.chars,
                    "signals": entry.signals,
                }
                for entry in cut
            ],
            # Whether the evidence was enough to answer, the best relevance and the floor.
            "abstention": result.verdict.trace() if result.verdict is not None else None,
            # The context as the agent got it, in order; a deletion redacts it with the rest.
            "context": "\n".join(item.claim.text for item in items),
        },
        "recalled_at": recalled_at.isoformat(),
        "kind": TraceKind.RECALL,
    }


def trace_write_out(*, trace: dict[str, Any], trace_write: str | None = None) -> None:
    """Write `trace` now (`inline`), have a worker write it after commit (`worker`), or
    store it as pending now and have a worker write it after commit (`outbox`).

    In a request, the message is sent once the answer has gone out (see
    `_send_after_response`): publishing to the broker costs a recall more than its SQL.
    """
    mode = trace_write or settings.RECALL_TRACE_WRITE
    if mode == "inline":
        recall_trace_record(trace=trace)
        return
    message = trace
    if mode == "outbox":
        # Durable before the answer: one small row that locks nothing shared (the use
        # counts move when a worker drains it); the message only names it, and a lost
        # one leaves the row to beat's sweep (services/recall_outbox.py).
        PendingTrace.objects.create(id=trace["id"], tenant_id=trace["tenant_id"], trace=trace)
        message = {"id": trace["id"], "pending": True}
    # robust: the answer goes out whatever happens to the broker; in `worker` mode a
    # lost message loses this trace and its use counts, nothing else.
    transaction.on_commit(lambda: _send_after_response(message), robust=True)


# The traces a request enqueues once its response has been sent: set by request_started,
# sent by request_finished (which the server fires when it closes the response, after the
# body went out). Outside a request (a task, a command) or where the signals ran in
# another context (ASGI), there is no list and the message goes at once.
_unsent_traces: ContextVar[list[dict[str, Any]] | None] = ContextVar(
    "memdesk_unsent_traces", default=None
)


def _send_after_response(trace: dict[str, Any]) -> None:
    unsent = _unsent_traces.get()
    if unsent is None:
        _enqueue(trace)
    else:
        unsent.append(trace)


def _send_unsent_traces() -> None:
    unsent = _unsent_traces.get()
    _unsent_traces.set(None)
    for trace in unsent or []:
        try:
            _enqueue(trace)
        except Exception:  # a broker outage loses traces, never the next request
            logger.warning("recall trace not enqueued", extra={"trace_id": trace["id"]})


@receiver(request_started, dispatch_uid="memdesk_recall_traces_request_started")
def _collect_traces(**kwargs: Any) -> None:
    _send_unsent_traces()  # anything a request left behind goes now, never lost
    _unsent_traces.set([])


@receiver(request_finished, dispatch_uid="memdesk_recall_traces_request_finished")
def _send_traces(**kwargs: Any) -> None:
    _send_unsent_traces()


def _enqueue(trace: dict[str, Any]) -> None:
    # By name: the tasks module imports this one, never the other way round. The
    # message's headers name the trace instead of repeating it: Celery would otherwise
    # write a repr of the whole trace there (the query, the chosen ids), where monitoring
    # tools show it, at the cost of a millisecond a recall.
    current_app.signature(
        "memory.record_recall", kwargs={"trace": trace}, queue=settings.RECALL_TRACE_QUEUE
    ).apply_async(argsrepr="()", kwargsrepr=f"{{'trace': '{trace['id']}'}}")


def recall_trace_record(*, trace: dict[str, Any]) -> bool:
    """Write a recall's trace and bump the chosen claims' use, in one statement.

    False when the trace was written before (a redelivered message): then nothing changes.
    A deletion of the subject that was unfinished when the recall ran, or ran since, may
    have looked for the subject's traces before this one existed, so the trace is written
    redacted, as the deletion would have left it. A deletion requested later commits its
    plan after this row, and finds it.
    """
    ranking = trace["ranking"]
    if "context" in ranking and "tokens" not in ranking:
        # Counted here, off the answer's path in `outbox` and `worker` modes.
        count = context_tokens(ranking["context"])
        ranking = {**ranking, "tokens": {"context": count, "tokenizer": TOKENIZER}}
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH erasure AS (
                SELECT EXISTS (
                    SELECT 1 FROM {_deletions_table()} d
                    WHERE d.tenant_id = %(tenant)s AND d.subject_id = %(subject)s
                      AND (d.finished_at IS NULL OR d.finished_at > %(recalled_at)s)
                ) AS erasing
            ), inserted AS (
                INSERT INTO {_TRACE} (id, tenant_id, subject_id, subject_key, token_id, query,
                                      filters, excluded, chosen, budget_chars, used_chars,
                                      duration_ms, ranking, created_at, redacted_at, kind)
                SELECT %(id)s, %(tenant)s, %(subject)s, %(subject_key)s, %(token)s,
                       CASE WHEN erasing THEN '' ELSE %(query)s END,
                       CASE WHEN erasing THEN '{{}}'::jsonb ELSE %(filters)s::jsonb END,
                       %(excluded)s::jsonb, %(chosen)s::uuid[], %(budget)s, %(used)s,
                       %(duration)s,
                       CASE WHEN erasing THEN %(ranking)s::jsonb - 'context'
                            ELSE %(ranking)s::jsonb END, %(recalled_at)s,
                       CASE WHEN erasing THEN now() END, %(kind)s
                FROM erasure
                ON CONFLICT (id) DO NOTHING
                RETURNING id
            ), used AS (
                -- A message delivered late never moves last_used_at back.
                UPDATE {_CLAIM} SET last_used_at = GREATEST(last_used_at, %(recalled_at)s),
                                    use_count = use_count + 1
                WHERE tenant_id = %(tenant)s AND id = ANY(%(chosen)s::uuid[])
                  AND EXISTS (SELECT 1 FROM inserted) AND %(counts_use)s
                RETURNING 1
            )
            SELECT count(*) FROM inserted
            """,  # noqa: S608 - table names are constants; every value is a parameter
            {
                "id": trace["id"],
                "tenant": trace["tenant_id"],
                "subject": trace["subject_id"],
                "subject_key": trace["subject_key"],
                "token": trace["token_id"],
                "query": trace["query"],
                "filters": json.dumps(trace["filters"]),
                "excluded": json.dumps(trace["excluded"]),
                "chosen": trace["chosen"],
                "budget": trace["budget_chars"],
                "used": trace["used_chars"],
                "duration": trace["duration_ms"],
                "ranking": json.dumps(ranking),
                "recalled_at": datetime.fromisoformat(trace["recalled_at"]),
                # A message enqueued before traces had kinds was a recall's.
                "kind": trace.get("kind", TraceKind.RECALL),
                # Hot memory orders its block by use: counting its own reads would
                # feed the block back into itself.
                "counts_use": trace.get("kind", TraceKind.RECALL) == TraceKind.RECALL,
            },
        )
        recorded: bool = cursor.fetchone()[0] == 1
        return recorded


def hot_memory_trace(
    *, tenant: Tenant, actor: Actor, subject: Subject, claim_ids: Sequence[str], budget_chars: int
) -> uuid.UUID:
    """Trace a hot-memory block handed to an agent, like a recall's answer, so its uses can
    be reported the same way. It counts no use: the block is ordered by use."""
    trace_id = uuid.uuid4()
    trace_write_out(
        trace={
            "id": str(trace_id),
            "tenant_id": tenant.pk,
            "subject_id": subject.pk,
            "subject_key": subject.key,
            "token_id": int(actor.id) if actor.kind == ActorKind.AGENT else None,
            "query": "",
            "filters": {"budget_chars": budget_chars},
            "excluded": {},
            "chosen": list(claim_ids),
            "budget_chars": budget_chars,
            "used_chars": 0,
            "duration_ms": 0,
            "ranking": {"items": {}, "cut": []},
            "recalled_at": timezone.now().isoformat(),
            "kind": TraceKind.HOT_MEMORY,
        }
    )
    return trace_id
