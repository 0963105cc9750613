"""The protocol fields of a ledger event: one step of a run, checked before it is stored.

An event that names a `stage` is a step of a run (docs/protocol.md). Its `kind`
must be one of `PROTOCOL_KINDS`, an `effect` names the outside change completely,
and a `verified` step cites what was observed. Everything wrong is named in one
`400 protocol_event_invalid`, and nothing is stored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from common.problems import Problem
from memory.claims.models import PROTOCOL_KINDS

PROTOCOL_EVENT_INVALID = "protocol_event_invalid"
STAGE_PATTERN = re.compile(r"^[a-z][a-z0-9_.\-]{0,99}$")
EFFECT_FIELDS = ("system", "operation", "reference")


@dataclass(frozen=True)
class ProtocolFields:
    """What a step adds to an event; all empty for an ordinary observation."""

    stage: str = ""
    input_fingerprint: str = ""
    policy_version: str = ""
    idempotency_key: str = ""
    effect: dict[str, str] | None = None
    evidence: list[dict[str, Any]] = field(default_factory=list)

    def given(self) -> list[str]:
        return [
            name
            for name in (
                "input_fingerprint",
                "policy_version",
                "idempotency_key",
                "effect",
                "evidence",
            )
            if getattr(self, name)
        ]

    def strings(self) -> list[str]:
        """Every string the agent sent in these fields, for the secret screen."""
        found = [self.stage, self.input_fingerprint, self.policy_version, self.idempotency_key]
        found += list((self.effect or {}).values())
        for item in self.evidence:
            found += [str(value) for value in item.values()]
        return found

    def excerpts(self) -> list[str]:
        """The words quoted as evidence: content, judged like the event's text."""
        return [str(item["excerpt"]) for item in self.evidence if item.get("excerpt")]

    def digest_part(self) -> dict[str, Any]:
        """What the event's digest adds for a step; nothing for an ordinary event, so the
        digest of an event without protocol fields is what it always was."""
        if not self.stage:
            return {}
        return {
            "stage": self.stage,
            "input_fingerprint": self.input_fingerprint,
            "policy_version": self.policy_version,
            "idempotency_key": self.idempotency_key,
            "effect": self.effect,
            "evidence": self.evidence,
        }


def protocol_fields_checked(*, kind: str, fields: ProtocolFields) -> ProtocolFields:
    """`fields` if they describe a well-formed step (or no step); else the problem."""
    errors: dict[str, list[str]] = {}
    if not fields.stage:
        for name in fields.given():
            errors[name] = ["Only a step of a run carries this: name its `stage` too."]
        if errors:
            errors["stage"] = ["Required with the protocol fields."]
    else:
        if not STAGE_PATTERN.match(fields.stage):
            errors["stage"] = [
                "Lower-case letters, digits, `_`, `.` and `-`, starting with a letter "
                "(e.g. draft, push, verify)."
            ]
        if kind not in PROTOCOL_KINDS:
            errors["kind"] = [f"A step's kind is one of: {', '.join(PROTOCOL_KINDS)}."]
        if fields.effect is not None and not all(fields.effect.get(n) for n in EFFECT_FIELDS):
            errors["effect"] = [f"An effect names its {', '.join(EFFECT_FIELDS)}."]
        if kind == "verified" and not fields.evidence:
            errors["evidence"] = ["A verified step cites what was observed: at least one item."]
    if errors:
        raise Problem(
            PROTOCOL_EVENT_INVALID,
            "The event is not a well-formed step of a run; see `errors`. Nothing was stored.",
            errors=errors,
        )
    return fields
