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


# The JSON types a manifest input may declare, and the Python values that fit each.
INPUT_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


@dataclass(frozen=True)
class Reason:
    code: str
    detail: str
    slot: str | None = None
    tool: str | None = None
    capability: str | None = None
    input: str | None = None


@dataclass(frozen=True)
class InputSpec:
    name: str
    type: str | None
    required: bool


def declared_inputs(manifest: dict[str, Any]) -> list[InputSpec]:
    """The manifest's ``inputs`` as specs. A mapping names each input with a description
    (required) or ``{type, required, description}``; a list holds names or such maps
    with a ``name``."""
    raw = manifest.get("inputs") or []
    entries: list[tuple[str, Any]] = (
        list(raw.items())
        if isinstance(raw, dict)
        else [
            (item, None) if isinstance(item, str) else (str(item.get("name", "")), item)
            for item in raw
            if isinstance(item, str | dict)
        ]
    )
    specs = []
    for name, spec in entries:
        if not name:
            continue
        detail = spec if isinstance(spec, dict) else {}
        kind = detail.get("type")
        specs.append(
            InputSpec(
                name=name,
                type=kind if kind in INPUT_TYPES else None,
                required=bool(detail.get("required", True)),
            )
        )
    # By name: the database keeps a mapping's keys in its own order.
    return sorted(specs, key=lambda spec: spec.name)


def _fits(value: Any, kind: str) -> bool:
    # bool is an int to Python, never to a manifest.
    if isinstance(value, bool) and kind in {"integer", "number"}:
        return False
    return isinstance(value, INPUT_TYPES[kind])


def input_reasons(manifest: dict[str, Any], inputs: dict[str, Any]) -> list[Reason]:
    """Every way ``inputs`` (bound to the current task) misses the manifest's inputs."""
    specs = declared_inputs(manifest)
    reasons = []
    for spec in specs:
        if spec.name not in inputs or inputs[spec.name] in (None, ""):
            if spec.required:
                reasons.append(
                    Reason(
                        "input_missing",
                        f"Bind the input {spec.name} to the current task's value; nothing "
                        "fills it from memory or an earlier run.",
                        input=spec.name,
                    )
                )
        elif spec.type is not None and not _fits(inputs[spec.name], spec.type):
            reasons.append(
                Reason(
                    "input_invalid",
                    f"The input {spec.name} must be of type {spec.type}.",
                    input=spec.name,
                )
            )
    known = {spec.name for spec in specs}
    for name in sorted(set(inputs) - known):
        reasons.append(Reason("input_unknown", f"The skill declares no input {name}.", input=name))
    return reasons


@dataclass(frozen=True)
class Instantiation:
    state: str
    reasons: list[Reason] = field(default_factory=list)


def check_instantiation(
    *,
    status: str,
    manifest: dict[str, Any],
    bindings: dict[str, str],
    inputs: dict[str, Any],
    granted_tools: frozenset[str],
    granted_capabilities: frozenset[str],
    said_tools: frozenset[str] | None,
    said_capabilities: frozenset[str] | None,
    token_capabilities: frozenset[str],
    retired_tools: frozenset[str],
) -> Instantiation:
    """``granted_*`` is what an admin granted the token; ``said_*`` what the agent says
    its runtime has right now (None: it did not say). A skill runs only on what is both
    granted and, when the agent says, at hand."""
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
    reasons.extend(input_reasons(manifest, inputs))
    for tool in manifest.get("tools") or []:
        if tool in retired_tools:
            reasons.append(Reason("tool_retired", f"{tool} was retired in this tenant.", tool=tool))
        elif tool not in granted_tools:
            reasons.append(
                Reason(
                    "tool_not_granted",
                    f"Your token was not granted the tool {tool}; an admin grants it.",
                    tool=tool,
                )
            )
        elif said_tools is not None and tool not in said_tools:
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
        elif capability not in granted_capabilities:
            reasons.append(
                Reason(
                    "capability_not_granted",
                    f"The skill needs `{capability}`, which your token was not granted; an "
                    "admin grants it.",
                    capability=capability,
                )
            )
        elif said_capabilities is not None and capability not in said_capabilities:
            reasons.append(
                Reason(
                    "capability_unavailable",
                    f"The skill needs `{capability}`, which your runtime says it lacks.",
                    capability=capability,
                )
            )
    return Instantiation(state=BLOCKED if reasons else READY, reasons=reasons)
