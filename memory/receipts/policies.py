"""Operation policies: what an agent's `succeeded` must carry before memdesk believes it.

A receipt's `succeeded` is a fact other runs act on (recovery answers `no_op`
for it), so for operations an admin names, the agent's word alone is not
enough. `agent_success_screened` is the one place the rule is applied; the
receipt transition path calls it before the state machine's guard moves
anything, and every refusal lists exactly what was missing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from common.problems import Problem
from memory.receipts.models.platforms import OperationPolicy
from memory.receipts.models.receipts import ReceiptState, TransitionRole

EVIDENCE_REQUIRED = "evidence_required"
# The reason recorded when a report waits for memdesk's own read of the platform.
VERIFYING_READ_REQUIRED = "verifying_read_required"


def _present(value: Any) -> bool:
    return value not in (None, "", [], {})


def missing_for_success(
    policy: OperationPolicy, *, external_id: str, evidence: Mapping[str, Any] | None
) -> list[str]:
    """What the report lacks, named as in `OperationPolicy.requirements` (the read aside)."""
    evidence = evidence or {}
    missing = [] if external_id or not policy.require_external_id else ["external_id"]
    missing += [
        f"evidence.{name}" for name in policy.evidence_fields if not _present(evidence.get(name))
    ]
    return missing


@dataclass(frozen=True)
class ScreenedMove:
    """Where an agent's report actually takes the receipt, and the reason recorded."""

    to: str
    reason: str


def agent_success_screened(
    *,
    policy: OperationPolicy | None,
    role: str | None,
    state: str,
    to: str,
    recorded_external_id: str,
    external_id: str,
    evidence: Mapping[str, Any] | None,
    reason: str,
) -> ScreenedMove:
    """Apply the operation's policy to a move, or raise `409 evidence_required`.

    Only an agent's `succeeded` is screened: workers settle by a read and
    editors must already give the platform's id. With a verifying read
    required, a complete report moves the receipt to `outcome_unknown`
    instead (a move the agent may make), so reconciliation reads the platform
    and only its answer can make the receipt `succeeded`.
    """
    if (
        policy is None
        or role != TransitionRole.AGENT
        or to != ReceiptState.SUCCEEDED
        # Any other starting state is the guard's to refuse, as it would be unscreened.
        or state != ReceiptState.SUBMITTED
    ):
        return ScreenedMove(to=to, reason=reason)
    missing = missing_for_success(
        policy, external_id=external_id or recorded_external_id, evidence=evidence
    )
    if missing:
        raise Problem(
            EVIDENCE_REQUIRED,
            f"`{policy.operation}` succeeds only with evidence: this report lacks "
            f"{', '.join(missing)}. The receipt was not moved; report again with them, or "
            "report `outcome_unknown` and let memdesk read the platform.",
            status_code=409,
            title="Evidence required",
            errors={name: ["Required by the operation's policy."] for name in missing},
            missing=missing,
            required=policy.requirements(),
        )
    if policy.require_verifying_read:
        return ScreenedMove(to=ReceiptState.OUTCOME_UNKNOWN, reason=VERIFYING_READ_REQUIRED)
    return ScreenedMove(to=to, reason=reason)
