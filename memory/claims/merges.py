"""Typed merges: how two claims on one identity combine, by the type of their value.

Pure rules, no database. A value's type is read from its shape:

- **set** — a JSON list: the union, the standing claim's items first, each item once.
- **counter** — an object whose only number is `count` (`{"count": 3}`, optionally
  with the `from` a merge left): the counts add, and `from` keeps each
  contribution (claim id and count), so the total can always be explained.
- **config** — any other object: merged key by key; on a key both set, the stronger
  authority wins, then the newer claim.
- **scalar** — anything else (text, number, boolean): the stronger authority wins,
  then the newer claim.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory.claims.models import AUTHORITY_RANK

SET, COUNTER, CONFIG, SCALAR = "set", "counter", "config", "scalar"
_RANKS: dict[str, int] = {str(authority): rank for authority, rank in AUTHORITY_RANK.items()}


@dataclass(frozen=True)
class Side:
    """One claim's part in a merge."""

    claim_id: str
    value: Any
    authority: str
    recorded_at: datetime


@dataclass(frozen=True)
class Merged:
    value_type: str
    value: Any
    # The side whose authority the merged claim keeps (the winner, or the weaker of the
    # two when both contributed).
    authority: str
    # Config keys or the scalar where the sides disagreed, and which side won each.
    decided: dict[str, str]


def value_type(value: Any) -> str:
    if isinstance(value, list):
        return SET
    if isinstance(value, dict):
        count = value.get("count")
        if (
            isinstance(count, int)
            and not isinstance(count, bool)
            and set(value) <= {"count", "from"}
        ):
            return COUNTER
        return CONFIG
    return SCALAR


def _stronger(a: Side, b: Side) -> Side:
    """The side that wins a disagreement: authority first, then the newer."""
    rank_a, rank_b = _RANKS.get(a.authority, 0), _RANKS.get(b.authority, 0)
    if rank_a != rank_b:
        return a if rank_a > rank_b else b
    return a if a.recorded_at > b.recorded_at else b


def _weaker_authority(a: Side, b: Side) -> str:
    # A value built from both sides is only as trustworthy as its weaker contribution.
    return a.authority if _RANKS.get(a.authority, 0) <= _RANKS.get(b.authority, 0) else b.authority


def _canonical(item: Any) -> str:
    return json.dumps(item, sort_keys=True, ensure_ascii=False)


def _contributions(side: Side) -> list[dict[str, Any]]:
    earlier = side.value.get("from")
    if isinstance(earlier, list) and earlier:
        return [dict(entry) for entry in earlier]
    return [{"claim": side.claim_id, "count": side.value["count"]}]


def merge_values(standing: Side, incoming: Side) -> Merged:
    """Merge `incoming` into `standing`; both must have the same value type."""
    kind = value_type(standing.value)
    if value_type(incoming.value) != kind:
        raise ValueError(f"a {value_type(incoming.value)} does not merge into a {kind}")
    if kind == SET:
        seen: set[str] = set()
        union = []
        for item in [*standing.value, *incoming.value]:
            key = _canonical(item)
            if key not in seen:
                seen.add(key)
                union.append(item)
        return Merged(SET, union, _weaker_authority(standing, incoming), {})
    if kind == COUNTER:
        parts = _contributions(standing) + _contributions(incoming)
        total = sum(int(part["count"]) for part in parts)
        return Merged(
            COUNTER, {"count": total, "from": parts}, _weaker_authority(standing, incoming), {}
        )
    if kind == CONFIG:
        winner = _stronger(standing, incoming)
        merged = dict(standing.value)
        decided: dict[str, str] = {}
        for key, value in incoming.value.items():
            if key in merged and merged[key] != value:
                decided[key] = winner.claim_id
                merged[key] = winner.value[key]
            else:
                merged[key] = value
        return Merged(CONFIG, merged, _weaker_authority(standing, incoming), decided)
    winner = _stronger(standing, incoming)
    decided = {} if standing.value == incoming.value else {"value": winner.claim_id}
    return Merged(SCALAR, winner.value, winner.authority, decided)


def merged_text(predicate: str, merged: Merged, winner_text: str) -> str:
    """What the merged claim says, in words recall can match."""
    label = predicate.replace("_", " ")
    if merged.value_type == SET:
        return f"{label}: " + ", ".join(
            item if isinstance(item, str) else _canonical(item) for item in merged.value
        )
    if merged.value_type == COUNTER:
        return f"{label}: {merged.value['count']}"
    if merged.value_type == CONFIG:
        return f"{label}: " + ", ".join(
            f"{key}={value if isinstance(value, str) else _canonical(value)}"
            for key, value in sorted(merged.value.items())
        )
    return winner_text
