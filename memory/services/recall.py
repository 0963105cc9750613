"""A recall: run the selector, then record the trace and the use. Nothing else changes."""

from __future__ import annotations

import time

from django.db import transaction

from accounts.actors import Actor
from accounts.models import ActorKind, Tenant
from common.problems import Problem
from common.screen import find_secrets_in_text, find_secrets_in_value
from memory.models import RecallTrace
from memory.selectors.claims import EXCLUSION_REASONS, RecallQuery, RecallResult, claims_recall
from memory.services.claims import claims_touch


def recall_run(
    *, tenant: Tenant, actor: Actor, subject_key: str, q: RecallQuery
) -> tuple[RecallResult, RecallTrace]:
    """Recall for `q.subject`; a subject memdesk has never heard of recalls nothing."""
    started = time.perf_counter()
    # The trace keeps the query and the filters, so a credential in them is refused.
    if (
        find_secrets_in_text(subject_key)
        or find_secrets_in_text(q.query)
        or find_secrets_in_value(q.scope)
    ):
        raise Problem(
            "secret_detected",
            "The recall query, subject or scope contains what looks like a credential. "
            "Nothing was recalled or stored; memdesk never stores secrets.",
        )
    if q.subject is None:
        result = RecallResult(items=[], excluded=dict.fromkeys(EXCLUSION_REASONS, 0), used_chars=0)
    else:
        result = claims_recall(tenant=tenant, q=q)
    chosen = [item.claim.id for item in result.items]
    with transaction.atomic():
        trace = RecallTrace.objects.create(
            tenant=tenant,
            subject=q.subject,
            subject_key=subject_key,
            token_id=int(actor.id) if actor.kind == ActorKind.AGENT else None,
            query=q.query,
            filters={
                "scope": q.scope,
                "as_of": q.as_of.isoformat() if q.as_of else None,
                "cutoff": q.cutoff.isoformat() if q.cutoff else None,
                "kinds": q.kinds,
                "limit": q.limit,
                "include_stale": q.include_stale,
            },
            excluded=result.excluded,
            chosen=chosen,
            budget_chars=q.budget_chars,
            used_chars=result.used_chars,
            duration_ms=round((time.perf_counter() - started) * 1000, 2),
            ranking={
                "semantic": result.semantic,
                "items": {
                    str(item.claim.id): {"rank": item.rank, "signals": item.signals}
                    for item in result.items
                },
            },
        )
        claims_touch(claim_ids=chosen)
    return result, trace
