"""Decision handlers for the claim queues: candidates, conflicts and stale."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from rest_framework import serializers

from common.problems import Problem
from memory.claims.models import Claim, ClaimRole, ClaimStatus, ExampleLabel
from memory.claims.presenters import ClaimPresenter, approve_risk
from memory.claims.services.claim_inputs import claim_version
from memory.claims.services.claim_moves import claim_merge_into, claim_move, claim_refresh
from memory.claims.services.claim_undo import claims_restore, claims_snapshot
from memory.claims.services.screening import screen_example_record
from reviews.models import Decision, Queue, ReviewItem
from reviews.registry import (
    OTHER_REASON,
    DecisionInput,
    QueuePolicy,
    UndoInput,
    register_queue,
)

# Why a person turned a memory down (or kept it): the words the metrics count.
CLAIM_REASONS = (
    ("unsupported", "Not supported by its sources"),
    ("wrong_subject", "About the wrong subject"),
    ("wrong_scope", "Wrong scope"),
    ("sensitive", "Sensitive; should not be remembered"),
    ("duplicate", "Duplicate of an existing memory"),
    ("injection", "Instruction injection"),
    ("outdated", "Outdated"),
    ("verified", "Verified against the source"),
    OTHER_REASON,
)
STALE_REASONS = (
    ("verified", "Checked again: still true"),
    ("outdated", "No longer true"),
    ("unsupported", "Its sources no longer support it"),
    OTHER_REASON,
)


class CandidatePayload(serializers.Serializer):
    # `merge`: the active claim the candidate's evidence joins.
    winner = serializers.UUIDField(required=False, format="hex_verbose")
    into = serializers.UUIDField(required=False, format="hex_verbose")
    # `approve` of a quarantined or doubted candidate: the person says they read the risk.
    confirm_risk = serializers.BooleanField(required=False)


class ScopeMap(serializers.DictField):
    child = serializers.DictField(child=serializers.CharField(max_length=200), allow_empty=False)


class ConflictPayload(serializers.Serializer):
    winner = serializers.UUIDField(required=False, format="hex_verbose")
    loser = serializers.UUIDField(required=False, format="hex_verbose")
    scopes = ScopeMap(required=False)


class StalePayload(serializers.Serializer):
    # `refresh`: when the claim needs checking again; without it, it never goes stale by date.
    refresh_after = serializers.DateTimeField(required=False, allow_null=True)

    def validate_refresh_after(self, value: Any) -> Any:
        if value is not None and value <= timezone.now():
            raise serializers.ValidationError("Choose a moment in the future.")
        return value


def _claim(item: ReviewItem) -> Claim | None:
    return Claim.objects.filter(tenant_id=item.tenant_id, pk=item.target_id).first()


class _ClaimHandler:
    # Verdicts whose effect on the claims an undo cannot put back.
    final_verdicts: tuple[str, ...] = ()

    def current_version(self, *, item: ReviewItem) -> str:
        claim = _claim(item)
        return claim_version(claim) if claim else "gone"

    def snapshot(
        self, *, item: ReviewItem, verdict: str, before: dict[str, Any] | None = None
    ) -> dict[str, Any] | None:
        if verdict in self.final_verdicts:
            return None
        # After the decision, the claims it found too: a side it superseded must still be
        # as the decision left it when the undo comes.
        also = list((before or {}).get("claims", {}))
        return {"claims": claims_snapshot(item=item, also=also)}

    def revert(self, undo: UndoInput) -> None:
        claims_restore(
            tenant=undo.item.tenant,
            actor=undo.actor,
            before=undo.before["claims"],
            decision_id=undo.decision.pk,
        )


def screen_label(*, verdict: str, reason_code: str) -> str | None:
    """What an editor's verdict on a candidate says of its content, for the screen.

    Approved or merged, it was worth keeping: benign. Rejected as an injection, it was
    one. Any other rejection (outdated, wrong subject…) says nothing about injection.
    """
    if verdict in ("approve", "merge"):
        return ExampleLabel.BENIGN
    if verdict == "reject" and reason_code == "injection":
        return ExampleLabel.INJECTION
    return None


class CandidateHandler(_ClaimHandler):
    # A merge moved the candidate's sources onto another claim; they stay there.
    final_verdicts = ("merge",)

    def recorded(self, *, item: ReviewItem, decision: Decision) -> None:
        label = screen_label(verdict=decision.verdict, reason_code=decision.reason_code)
        if label is not None:
            screen_example_record(
                tenant=item.tenant, claim_id=item.target_id, decision=decision, label=label
            )

    def apply(self, decision: DecisionInput) -> None:
        tenant = decision.item.tenant
        if decision.verdict == "approve":
            risk = approve_risk(_claim(decision.item))
            if risk and not decision.payload.get("confirm_risk"):
                raise Problem(
                    "risk_not_confirmed",
                    f"Approving this candidate needs your confirmation: {risk}.",
                    errors={"confirm_risk": [f"Confirm that you read the risk: {risk}."]},
                )
            claim_move(
                tenant=tenant,
                actor=decision.actor,
                claim_id=decision.item.target_id,
                to=ClaimStatus.ACTIVE,
                by=ClaimRole.REVIEWER,
                reason=decision.reason_code or "approved",
            )
        elif decision.verdict == "reject":
            claim_move(
                tenant=tenant,
                actor=decision.actor,
                claim_id=decision.item.target_id,
                to=ClaimStatus.REJECTED,
                by=ClaimRole.REVIEWER,
                reason=decision.reason_code,
            )
        elif decision.verdict == "merge":
            into = decision.payload.get("winner") or decision.payload.get("into")
            if not into:
                raise Problem(
                    "merge_target_required",
                    "Merging needs `winner`: the active claim to merge into.",
                    errors={"winner": ["Name the active claim."]},
                )
            claim_merge_into(
                tenant=tenant,
                actor=decision.actor,
                claim_id=decision.item.target_id,
                into_id=into,
                by=ClaimRole.REVIEWER,
                reason=decision.reason_code or "duplicate",
            )


class ConflictHandler(_ClaimHandler):
    """The item's target is the newer side; `conflicts_with` names the other side(s)."""

    def _sides(self, item: ReviewItem) -> list[Claim]:
        claim = _claim(item)
        if claim is None:
            return []
        others = Claim.objects.filter(tenant_id=item.tenant_id, pk__in=claim.conflicts_with)
        return [claim, *others]

    def apply(self, decision: DecisionInput) -> None:
        tenant = decision.item.tenant
        sides = self._sides(decision.item)
        ids = {str(c.id) for c in sides}
        if decision.verdict == "supersede":
            winner = str(decision.payload.get("winner") or "")
            if winner not in ids:
                raise Problem(
                    "winner_required",
                    "Name the winning side of the conflict in `winner`.",
                    errors={"winner": [f"One of: {', '.join(sorted(ids))}."]},
                )
            claim_move(
                tenant=tenant,
                actor=decision.actor,
                claim_id=winner,
                to=ClaimStatus.ACTIVE,
                by=ClaimRole.REVIEWER,
                reason="conflict_resolved",
            )
            for side in sides:
                if str(side.id) != winner and side.status == ClaimStatus.CONFLICTED:
                    claim_move(
                        tenant=tenant,
                        actor=decision.actor,
                        claim_id=side.id,
                        to=ClaimStatus.SUPERSEDED,
                        by=ClaimRole.REVIEWER,
                        reason="lost_conflict",
                    )
        elif decision.verdict == "keep_both":
            scopes = decision.payload.get("scopes") or {}
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
                claim_move(
                    tenant=tenant,
                    actor=decision.actor,
                    claim_id=side.id,
                    to=ClaimStatus.ACTIVE,
                    by=ClaimRole.REVIEWER,
                    reason="kept_with_narrower_scope",
                    scope=scopes.get(str(side.id)),
                )
        elif decision.verdict == "reject":
            loser = str(decision.payload.get("loser") or decision.item.target_id)
            if loser not in ids:
                raise Problem("loser_required", "Name the rejected side in `loser`.")
            claim_move(
                tenant=tenant,
                actor=decision.actor,
                claim_id=loser,
                to=ClaimStatus.REJECTED,
                by=ClaimRole.REVIEWER,
                reason=decision.reason_code,
            )
            for side in sides:
                if str(side.id) != loser:
                    claim_move(
                        tenant=tenant,
                        actor=decision.actor,
                        claim_id=side.id,
                        to=ClaimStatus.ACTIVE,
                        by=ClaimRole.REVIEWER,
                        reason="conflict_resolved",
                    )


class StaleHandler(_ClaimHandler):
    def apply(self, decision: DecisionInput) -> None:
        if decision.verdict == "invalidate":
            claim_move(
                tenant=decision.item.tenant,
                actor=decision.actor,
                claim_id=decision.item.target_id,
                to=ClaimStatus.INVALIDATED,
                by=ClaimRole.REVIEWER,
                reason=decision.reason_code or "outdated",
            )
        else:
            claim_refresh(
                tenant=decision.item.tenant,
                actor=decision.actor,
                claim_id=decision.item.target_id,
                refresh_after=decision.payload.get("refresh_after"),
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
            labels={
                "approve": "Approve",
                "reject": "Reject",
                # Says what merging does: the candidate's sources join the claim picked above.
                "merge": "Merge: add its evidence to the chosen claim",
            },
            reasons=CLAIM_REASONS,
            payload=CandidatePayload,
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
            labels={
                "supersede": "Keep the chosen side",
                "keep_both": "Keep both, narrower",
                "reject": "Reject the chosen side",
            },
            reasons=CLAIM_REASONS,
            payload=ConflictPayload,
        ),
    )
    register_queue(
        Queue.STALE,
        QueuePolicy(
            handler=StaleHandler(),
            verdicts=("refresh", "invalidate"),
            negative_verdicts=("invalidate",),
            presenter=ClaimPresenter(
                "memory/review/claim.html", decide_fields="memory/review/stale_fields.html"
            ),
            approve_verdict="refresh",
            labels={"refresh": "Still true", "invalidate": "No longer true"},
            reasons=STALE_REASONS,
            payload=StalePayload,
        ),
    )
