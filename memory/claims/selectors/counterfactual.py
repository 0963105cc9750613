"""Counterfactual recall: what would the agent have seen without a memory, or with it stale
or corrected, or with an outdated or an unrelated memory in its place? The basis for
measuring what a memory is worth.

`outdated` puts in the claim's place, at its rank, the revision it superseded (the
look-alike an agent would have got from stale memory); `irrelevant` puts there an active
claim of the same subject on another predicate that the recall did not return (what
an agent gets from memory that does not bear on the task).

A recorded trace is replayed — its query and filters, as of the time it was
asked unless it named another — against memory as it stands now, once as it
is (the baseline) and once with the change; the difference between the two is
the answer. Nothing is written: no trace, no use count, no claim.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from accounts.models import Tenant
from common.problems import Problem, not_found
from memory.claims.models import Claim, ClaimStatus, RecallTrace, TraceKind
from memory.claims.selectors.claims import RecallResult, claims_recall
from memory.claims.selectors.recall_ranking import RecallQuery

CHANGES = ("hide", "stale", "correct", "outdated", "irrelevant")


@dataclass(frozen=True)
class Counterfactual:
    change: str
    claim: Claim
    recorded: list[str]  # what the trace returned when it was asked
    baseline: RecallResult  # the replay, memory as it is
    changed: RecallResult  # the replay with the change
    removed: list[str]  # returned by the baseline, not with the change
    added: list[str]  # returned only with the change: the next candidates
    moved: list[tuple[str, int, int]]  # (claim, position in baseline, position with change)

    @property
    def unchanged(self) -> bool:
        return not (self.removed or self.added or self.moved)


def replayable(trace: RecallTrace | None) -> RecallTrace:
    """A trace a counterfactual can replay, or the problem that says why not."""
    if trace is None:
        raise not_found("trace")
    if trace.kind != TraceKind.RECALL:
        raise Problem(
            "trace_kind_unsupported",
            "Only a recall's trace can be replayed; a hot-memory block has no query.",
        )
    if trace.redacted_at is not None:
        raise Problem(
            "trace_redacted",
            "A deletion redacted this trace: its query is gone, so it cannot be replayed.",
            status_code=409,
        )
    return trace


def _when(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def trace_replay_query(*, trace: RecallTrace) -> RecallQuery:
    """The recall a trace recorded, asked again as of the time it was first asked."""
    filters = trace.filters or {}
    return RecallQuery(
        subject=trace.subject,
        scope=filters.get("scope") or {},
        query=trace.query,
        as_of=_when(filters.get("as_of")) or trace.created_at,
        cutoff=_when(filters.get("cutoff")),
        kinds=filters.get("kinds") or [],
        limit=filters.get("limit") or 10,
        budget_chars=trace.budget_chars,
        include_stale=bool(filters.get("include_stale")),
    )


def recall_counterfactual(
    *,
    tenant: Tenant,
    trace: RecallTrace,
    claim: Claim,
    change: str,
    correction: tuple[str, Any] | None = None,
) -> Counterfactual:
    """Replay `trace` twice, without and with `change` to `claim`; two recall statements."""
    base_query = trace_replay_query(trace=trace)
    if change == "hide":
        changed_query = replace(base_query, hidden=[claim.id])
    elif change == "stale":
        changed_query = replace(base_query, made_stale=[claim.id])
    elif change in ("outdated", "irrelevant"):
        # The stand-in's words at the claim's place: ranked by what it says, as a correction.
        stand_in = _stand_in(trace=trace, claim=claim, change=change)
        changed_query = replace(base_query, corrected={claim.id: (stand_in.text, stand_in.value)})
    else:
        text, value = correction or (claim.text, claim.value)
        changed_query = replace(base_query, corrected={claim.id: (text, value)})
    baseline = claims_recall(tenant=tenant, q=base_query)
    changed = claims_recall(tenant=tenant, q=changed_query)
    before = [str(item.claim.id) for item in baseline.items]
    after = [str(item.claim.id) for item in changed.items]
    return Counterfactual(
        change=change,
        claim=claim,
        recorded=[str(claim_id) for claim_id in trace.chosen],
        baseline=baseline,
        changed=changed,
        removed=[claim_id for claim_id in before if claim_id not in after],
        added=[claim_id for claim_id in after if claim_id not in before],
        moved=[
            (claim_id, before.index(claim_id), after.index(claim_id))
            for claim_id in before
            if claim_id in after and before.index(claim_id) != after.index(claim_id)
        ],
    )


def _stand_in(*, trace: RecallTrace, claim: Claim, change: str) -> Claim:
    """What `outdated` or `irrelevant` puts in the claim's place, or why there is none."""
    if change == "outdated":
        stand_in = claim.supersedes
        if stand_in is None or stand_in.status == ClaimStatus.ERASED:
            raise Problem(
                "no_outdated_revision",
                "The claim superseded no revision that still holds its content: there is "
                "no outdated look-alike to offer in its place.",
                status_code=409,
            )
        return stand_in
    returned = [str(claim_id) for claim_id in trace.chosen]
    unrelated = (
        Claim.objects.filter(
            tenant_id=claim.tenant_id, subject_id=claim.subject_id, status=ClaimStatus.ACTIVE
        )
        .exclude(predicate=claim.predicate)
        .exclude(pk__in=returned)
        .order_by("-recorded_at")
        .first()
    )
    if unrelated is None:
        raise Problem(
            "no_unrelated_memory",
            "The subject has no other active memory the recall did not return to put in "
            "the claim's place.",
            status_code=409,
        )
    return unrelated
