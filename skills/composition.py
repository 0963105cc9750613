"""Composition contracts: what two skills loaded together would do to each other's data.

A version declares the data labels it ``consumes`` and ``produces``
(``name`` or ``name:class``, classes ordered public < internal < private).
Two skills conflict when

- ``shared_output``: both produce the same data, so a runtime must order
  them or pick one (two skills writing one resource);
- ``classification_mismatch``: one produces data of a class the other only
  accepts at a lower class (internal documents into a skill that consumes
  public ones: private reads must not flow into a public publisher).

Pure functions over manifests; the catalog calls them for what it returns
together with what the agent says it has loaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from skills.package.manifest import DATA_CLASSES

_RANK = {name: rank for rank, name in enumerate(DATA_CLASSES)}


@dataclass(frozen=True)
class Conflict:
    kind: str
    skills: tuple[str, str]
    label: str
    detail: str


def _split(label: str) -> tuple[str, str | None]:
    name, _, data_class = label.partition(":")
    return name, data_class or None


def _flows(
    producer: str, p_manifest: Mapping[str, Any], consumer: str, c_manifest: Mapping[str, Any]
) -> list[Conflict]:
    conflicts = []
    accepted = dict(_split(label) for label in c_manifest.get("consumes") or [])
    for label in p_manifest.get("produces") or []:
        name, produced_class = _split(label)
        accepted_class = accepted.get(name)
        if produced_class is None or accepted_class is None:
            continue
        if _RANK[produced_class] > _RANK[accepted_class]:
            conflicts.append(
                Conflict(
                    kind="classification_mismatch",
                    skills=(producer, consumer),
                    label=name,
                    detail=f"{producer} produces {name} as {produced_class}; {consumer} accepts "
                    f"{name} only as {accepted_class}. Do not pass it on.",
                )
            )
    return conflicts


def conflicts_between(manifests: Mapping[str, Mapping[str, Any]]) -> list[Conflict]:
    """Every conflict between two of the given skills (slug → manifest), in a stable order."""
    found: list[Conflict] = []
    for (a, a_manifest), (b, b_manifest) in combinations(sorted(manifests.items()), 2):
        a_out = {_split(label)[0] for label in a_manifest.get("produces") or []}
        b_out = {_split(label)[0] for label in b_manifest.get("produces") or []}
        found.extend(
            Conflict(
                kind="shared_output",
                skills=(a, b),
                label=name,
                detail=f"{a} and {b} both produce {name}; run them one after the other or "
                "choose one.",
            )
            for name in sorted(a_out & b_out)
        )
        found.extend(_flows(a, a_manifest, b, b_manifest))
        found.extend(_flows(b, b_manifest, a, a_manifest))
    return found
