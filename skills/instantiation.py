"""Instantiation check: may this agent run this version with these bindings, here and now?

Inputs are bound to the current task first, then the
preconditions are checked; anything missing stops the run at the preparing
stage, and no old value from memory fills a gap. A skill declares credential
*slots*; the agent binds each slot to the *name* of a secret it holds
elsewhere (its vault, its runtime's environment). memdesk never sees a
value and refuses one that looks like it.

The answer is ``ready`` or ``blocked`` with every reason, never just the
first, so an agent can fix them all at once. Pure: the service records it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from accounts.models import Capability
from skills.models import VersionStatus

READY = "ready"
BLOCKED = "blocked"
RUNNABLE_STATUSES = frozenset({VersionStatus.PUBLISHED, VersionStatus.DEPRECATED})
# memdesk's own token capabilities: a skill declaring one needs a token holding it.
TOKEN_CAPABILITIES = frozenset(Capability.values)


@dataclass(frozen=True)
class Reason:
    code: str
    detail: str
    slot: str | None = None
    tool: str | None = None
    capability: str | None = None


@dataclass(frozen=True)
class Instantiation:
    state: str
    reasons: list[Reason] = field(default_factory=list)


def check_instantiation(
    *,
    status: str,
    manifest: dict[str, Any],
    bindings: dict[str, str],
    tools: frozenset[str],
    environment_capabilities: frozenset[str],
    token_capabilities: frozenset[str],
    retired_tools: frozenset[str],
) -> Instantiation:
    reasons: list[Reason] = []
    if status == VersionStatus.INCOMPATIBLE:
        reasons.append(
            Reason("version_incompatible", "A tool this version needs was retired; use another.")
        )
    elif status not in RUNNABLE_STATUSES:
        reasons.append(
            Reason("version_not_published", f"The version is {status}; only published runs.")
        )
    for slot in manifest.get("credentials") or []:
        name = slot["slot"]
        if name not in bindings:
            purpose = f" ({slot['purpose']})" if slot.get("purpose") else ""
            reasons.append(
                Reason(
                    "slot_unbound",
                    f"Bind the credential slot {name}{purpose} to the name of a secret you hold.",
                    slot=name,
                )
            )
    for tool in manifest.get("tools") or []:
        if tool in retired_tools:
            reasons.append(Reason("tool_retired", f"{tool} was retired in this tenant.", tool=tool))
        elif tool not in tools:
            reasons.append(
                Reason("tool_unavailable", f"You do not have the tool {tool}.", tool=tool)
            )
    for capability in manifest.get("capabilities") or []:
        if capability in TOKEN_CAPABILITIES:
            if capability not in token_capabilities:
                reasons.append(
                    Reason(
                        "capability_exceeds_token",
                        f"The skill needs `{capability}`, which your token does not hold.",
                        capability=capability,
                    )
                )
        elif capability not in environment_capabilities:
            reasons.append(
                Reason(
                    "capability_unavailable",
                    f"The skill needs `{capability}`; say so in `capabilities` if your runtime "
                    "grants it.",
                    capability=capability,
                )
            )
    return Instantiation(state=BLOCKED if reasons else READY, reasons=reasons)
