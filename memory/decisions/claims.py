"""Decision handlers for the claim queues: candidates, conflicts and stale."""

from __future__ import annotations

from typing import Any

from django.utils.dateparse import parse_datetime

from accounts.actors import Actor
from common.problems import Problem
from memory.models import Claim, ClaimStatus
from memory.presenters import ClaimPresenter
from memory.services.claims import (
    claim_merge_into,
    claim_refresh,
    claim_set_status,
    claim_version,
)
from reviews.models import Queue, ReviewItem
from reviews.registry import QueuePolicy, register_queue

REVIEWABLE = {ClaimStatus.CANDIDATE, ClaimStatus.QUARANTINED}


def _claim(item: ReviewItem) -> Claim | None:
    return Claim.objects.filter(tenant_id=item.tenant_id, pk=item.target_id).first()


class _ClaimHandler:
    def current_version(self, *, item: ReviewItem) -> str:
        claim = _claim(item)
        return claim_version(claim) if claim else "gone"


class CandidateHandler(_ClaimHandler):
    def apply(
        self,
        *,
        item: ReviewItem,
        verdict: str,
        reason_code: str,
        note: str,
        payload: dict[str, Any],
        actor: Actor,
    ) -> None:
        tenant = item.tenant
        if verdict == "approve":
            claim_set_status(
                tenant=tenant,
                actor=actor,
                claim_id=item.target_id,
                to=ClaimStatus.ACTIVE,
                allowed_from=REVIEWABLE,
                reason=reason_code or "approved",
            )
        elif verdict == "reject":
            claim_set_status(
                tenant=tenant,
                actor=actor,
                claim_id=item.target_id,
                to=ClaimStatus.REJECTED,
                allowed_from=REVIEWABLE,
                reason=reason_code,
            )
        elif verdict == "merge":
            into = payload.get("winner") or payload.get("into")
            if not into:
                raise Problem(
                    "merge_target_required",
                    "Merging needs `winner`: the active claim to merge into.",
                    errors={"winner": ["Name the active claim."]},
                )
            claim_merge_into(
                tenant=tenant,
                actor=actor,
                claim_id=item.target_id,
                into_id=into,
                reason=reason_code or "duplicate",
            )


class ConflictHandler(_ClaimHandler):
    """The item's target is the newer side; `conflicts_with` names the other side(s)."""

    def _sides(self, item: ReviewItem) -> list[Claim]:
        claim = _claim(item)
        if claim is None:
            return []
        others = Claim.objects.filter(tenant_id=item.tenant_id, pk__in=claim.conflicts_with)
        return [claim, *others]

    def apply(
        self,
        *,
        item: ReviewItem,
        verdict: str,
        reason_code: str,
        note: str,
        payload: dict[str, Any],
        actor: Actor,
    ) -> None:
        tenant = item.tenant
        sides = self._sides(item)
        ids = {str(c.id) for c in sides}
        live = {ClaimStatus.ACTIVE, ClaimStatus.CONFLICTED}
        if verdict == "supersede":
            winner = str(payload.get("winner") or "")
            if winner not in ids:
                raise Problem(
                    "winner_required",
                    "Name the winning side of the conflict in `winner`.",
                    errors={"winner": [f"One of: {', '.join(sorted(ids))}."]},
                )
            claim_set_status(
                tenant=tenant,
                actor=actor,
                claim_id=winner,
                to=ClaimStatus.ACTIVE,
                allowed_from=live,
                reason="conflict_resolved",
            )
            for side in sides:
                if str(side.id) != winner and side.status == ClaimStatus.CONFLICTED:
                    claim_set_status(
                        tenant=tenant,
                        actor=actor,
                        claim_id=side.id,
                        to=ClaimStatus.SUPERSEDED,
                        allowed_from={ClaimStatus.CONFLICTED},
                        reason="lost_conflict",
                    )
        elif verdict == "keep_both":
            scopes = payload.get("scopes") or {}
            if not scopes or not set(scopes) <= ids:
                raise Problem(
                    "scopes_required",
                    "Keeping both needs a narrower scope for at least one side, in `scopes` "
                    "keyed by claim id.",
                    errors={"scopes": ['e.g. {"<claim id>": {"project": "crm"}}']},
                )
            for side in sides:
                narrower = scopes.get(str(side.id))
                if narrower is not None and not set(side.scope.items()) <= set(narrower.items()):
                    raise Problem(
                        "scope_not_narrower",
                        "A new scope must contain the claim's current scope.",
                        errors={"scopes": [f"{side.id} must keep {side.scope}."]},
                    )
            for side in sorted(sides, key=lambda c: c.status != ClaimStatus.ACTIVE):
                claim_set_status(
                    tenant=tenant,
                    actor=actor,
                    claim_id=side.id,
                    to=ClaimStatus.ACTIVE,
                    allowed_from=live,
                    reason="kept_with_narrower_scope",
                    scope=scopes.get(str(side.id)),
                )
        elif verdict == "reject":
            loser = str(payload.get("loser") or item.target_id)
            if loser not in ids:
                raise Problem("loser_required", "Name the rejected side in `loser`.")
            claim_set_status(
                tenant=tenant,
                actor=actor,
                claim_id=loser,
                to=ClaimStatus.REJECTED,
                allowed_from=live,
                reason=reason_code,
            )
            for side in sides:
                if str(side.id) != loser:
                    claim_set_status(
                        tenant=tenant,
                        actor=actor,
                        claim_id=side.id,
                        to=ClaimStatus.ACTIVE,
                        allowed_from=live,
                        reason="conflict_resolved",
                    )


class StaleHandler(_ClaimHandler):
    def apply(
        self,
        *,
        item: ReviewItem,
        verdict: str,
        reason_code: str,
        note: str,
        payload: dict[str, Any],
        actor: Actor,
    ) -> None:
        if verdict == "invalidate":
            claim_set_status(
                tenant=item.tenant,
                actor=actor,
                claim_id=item.target_id,
                to=ClaimStatus.INVALIDATED,
                allowed_from={ClaimStatus.ACTIVE},
                reason=reason_code or "outdated",
            )
        else:
            claim_refresh(
                tenant=item.tenant,
                actor=actor,
                claim_id=item.target_id,
                refresh_after=parse_datetime(str(payload.get("refresh_after") or "")),
            )


def register() -> None:
    register_queue(
        Queue.CANDIDATES,
        QueuePolicy(
            handler=CandidateHandler(),
            verdicts=("approve", "reject", "merge"),
            presenter=ClaimPresenter(
                "memory/review/claim.html", decide_fields="memory/review/candidate_fields.html"
            ),
            approve_verdict="approve",
        ),
    )
    register_queue(
        Queue.CONFLICTS,
        QueuePolicy(
            handler=ConflictHandler(),
            verdicts=("supersede", "keep_both", "reject"),
            presenter=ClaimPresenter(
                "memory/review/claim.html", decide_fields="memory/review/conflict_fields.html"
            ),
        ),
    )
    register_queue(
        Queue.STALE,
        QueuePolicy(
            handler=StaleHandler(),
            verdicts=("refresh", "invalidate"),
            negative_verdicts=("invalidate",),
            presenter=ClaimPresenter("memory/review/claim.html"),
            approve_verdict="refresh",
        ),
    )
