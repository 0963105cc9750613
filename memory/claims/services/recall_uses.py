"""Injection traces: an agent reports which recalled claims it put into a model's context.

A report names claims of one trace (a recall's answer or a hot-memory block),
where in the prompt each went and whether the output cited it. Each claim is
reported once per trace; a report repeated (a retry) records nothing twice and
says which claims were already on record. A claim reported `harmful` (it misled the
agent) gets a review item in the stale queue, reason `harmful_use`. Reports are
append-only; a trace a deletion redacted takes none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from accounts.actors import Actor
from accounts.models import ActorKind, Tenant
from common.problems import Problem, not_found
from common.screen import find_secrets_in_text
from memory.claims.models import Claim, ClaimStatus, RecallTrace, RecallUse
from memory.claims.services.claim_inputs import open_claim_review
from reviews.models import Queue


@dataclass(frozen=True)
class UseReport:
    claim_id: str
    position: int | None
    cited: bool
    harmful: bool = False


@dataclass(frozen=True)
class UsesRecorded:
    trace: RecallTrace
    recorded: list[str]
    already_reported: list[str]
    # Claims the trace returned that no report (this one or an earlier one) names.
    unused: list[str]


def recall_uses_report(
    *,
    tenant: Tenant,
    actor: Actor,
    trace_id: Any,
    allowed_subjects: frozenset[str] | None,
    items: list[UseReport],
    run_id: str = "",
    task_id: str = "",
) -> UsesRecorded:
    if find_secrets_in_text(run_id) or find_secrets_in_text(task_id):
        raise Problem(
            "secret_detected",
            "The run or task id looks like a credential. Nothing was recorded; memdesk never "
            "stores secrets.",
        )
    with transaction.atomic():
        # The lock orders this report against another for the same trace and
        # against a deletion redacting it.
        trace = RecallTrace.objects.select_for_update().filter(tenant=tenant, pk=trace_id).first()
        if trace is None or (
            allowed_subjects is not None and trace.subject_key not in allowed_subjects
        ):
            raise not_found("trace")
        if trace.redacted_at is not None:
            raise Problem(
                "trace_redacted",
                "A deletion redacted this trace; uses of what it returned are no longer recorded.",
                status_code=409,
            )
        chosen = [str(claim_id) for claim_id in trace.chosen]
        foreign = [item.claim_id for item in items if item.claim_id not in chosen]
        if foreign:
            raise Problem(
                "item_not_in_trace",
                "Report only claims this trace returned.",
                errors={
                    "items": [f"{claim_id} was not returned by this trace." for claim_id in foreign]
                },
                items=foreign,
            )
        on_record = {
            str(claim_id)
            for claim_id in RecallUse.objects.filter(tenant=tenant, trace=trace).values_list(
                "claim_id", flat=True
            )
        }
        new = [item for item in items if item.claim_id not in on_record]
        token_id = int(actor.id) if actor.kind == ActorKind.AGENT else None
        # Used past its refresh date: the stale-claim use figure (docs/reliability.md). Read
        # now, as of the recall, since a refresh later moves the date.
        stale = {
            str(claim_id)
            for claim_id in Claim.objects.filter(
                tenant=tenant,
                pk__in=[item.claim_id for item in new],
                refresh_after__lte=trace.created_at,
            ).values_list("pk", flat=True)
        }
        RecallUse.objects.bulk_create(
            [
                RecallUse(
                    tenant=tenant,
                    trace=trace,
                    claim_id=item.claim_id,
                    position=item.position,
                    cited=item.cited,
                    harmful=item.harmful,
                    run_id=run_id,
                    task_id=task_id,
                    token_id=token_id,
                    past_refresh=item.claim_id in stale,
                )
                for item in new
            ]
        )
        _harmful_reviews_open(
            tenant=tenant, actor=actor, claim_ids=[item.claim_id for item in new if item.harmful]
        )
        named = on_record | {item.claim_id for item in new}
    return UsesRecorded(
        trace=trace,
        recorded=[item.claim_id for item in new],
        already_reported=[item.claim_id for item in items if item.claim_id in on_record],
        unused=[claim_id for claim_id in chosen if claim_id not in named],
    )


def _harmful_reviews_open(*, tenant: Tenant, actor: Actor, claim_ids: list[str]) -> None:
    """A memory an agent says misled it goes to the stale queue (`harmful_use`), where an
    editor says whether it is still true (it stays) or not (it is invalidated). One open
    item per claim, however many reports: review_open returns the one already open."""
    for claim in Claim.objects.filter(
        tenant=tenant, pk__in=claim_ids, status=ClaimStatus.ACTIVE
    ).select_related("subject"):
        open_claim_review(
            tenant=tenant, queue=Queue.STALE, claim=claim, reasons=["harmful_use"], actor=actor
        )
