"""`python -m bench skills-discovery`: does the catalog find the right skill by meaning?

The set in testing/skill_discovery holds 18 skills and tasks of three kinds, split
into a tuning half (the floor and weights were chosen on it) and a held-out half
(measured, never tuned on). The tasks are ranked by ``skills.discovery.rank``, the
function the catalog serves with, against vectors of ``discovery_document``, what
publishing stores. A hit is:

- positive: the expected skill among the first three;
- negative (no skill is about the task): nothing returned;
- neighbouring (a near skill competes, e.g. writing vs publishing a report): the
  expected skill among the first three and ranked above its neighbour.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from django.utils import timezone

from skills.discovery import Candidate, discovery_document, lexical_text, rank, task_words
from skills.embedding import embed_document, embedder_model, query_vector, unpack

DATA = Path(__file__).resolve().parent.parent / "testing" / "skill_discovery"
TOP = 3


def _candidates(skills: list[dict[str, Any]]) -> list[Candidate]:
    candidates = []
    for skill in skills:
        manifest = {"description": skill["description"], "triggers": skill["triggers"]}
        embedded = embed_document(
            discovery_document(name=skill["slug"], manifest=manifest, body=skill["body"])
        )
        if embedded is None:
            raise SystemExit("skills-discovery needs an embedder (MEMDESK_EMBEDDER=local).")
        lexical = lexical_text(slug=skill["slug"], name=skill["slug"], manifest=manifest)
        candidates.append(Candidate(skill["slug"], manifest, lexical, unpack(embedded[2])))
    return candidates


def _hit(task: dict[str, Any], ranked: list[str]) -> bool:
    if task["kind"] == "negative":
        return not ranked
    top = ranked[:TOP]
    if task["expect"] not in top:
        return False
    if task["kind"] == "neighbour" and task["neighbour"] in ranked:
        return ranked.index(task["expect"]) < ranked.index(task["neighbour"])
    return True


def measure(part: list[dict[str, Any]], candidates: list[Candidate]) -> dict[str, Any]:
    per_kind: dict[str, list[bool]] = {}
    misses = []
    for task in part:
        asked = query_vector(task["task"])
        ranked = [
            entry.key
            for entry in rank(
                candidates,
                query_vector=asked[1] if asked else None,
                words=task_words(task["task"]),
            )
        ]
        hit = _hit(task, ranked)
        per_kind.setdefault(task["kind"], []).append(hit)
        if not hit:
            misses.append(f"{task['kind']}: {task['task']!r} → {ranked[:TOP]}")
    hits = [hit for kind in per_kind.values() for hit in kind]
    return {
        "hit": sum(hits) / len(hits),
        "tasks": len(hits),
        "kinds": {kind: (sum(v), len(v)) for kind, v in per_kind.items()},
        "misses": misses,
    }


def report() -> str:
    skills = json.loads((DATA / "skills.json").read_text())
    tasks = json.loads((DATA / "tasks.json").read_text())
    started = time.perf_counter()
    candidates = _candidates(skills)
    results = {part: measure(tasks[part], candidates) for part in ("tuning", "heldout")}
    seconds = time.perf_counter() - started
    lines = [
        "## Skill discovery: top-3 hit by meaning",
        "",
        f"Run `python -m bench skills-discovery` on {timezone.now():%Y-%m-%d %H:%M} UTC; "
        f"embedder {embedder_model()}, {os.cpu_count()} CPUs, {seconds:.1f} s. Written by "
        "bench/skill_discovery.py from testing/skill_discovery "
        f"({len(skills)} skills); ranked by skills.discovery.rank as the catalog ranks.",
        "",
        "| part | tasks | top-3 hit | positive | negative (nothing returned) | neighbouring |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for part, result in results.items():
        kinds = result["kinds"]
        cells = [f"{kinds[k][0]}/{kinds[k][1]}" for k in ("positive", "negative", "neighbour")]
        lines.append(
            f"| {part} | {result['tasks']} | {result['hit']:.3f} | " + " | ".join(cells) + " |"
        )
    for part, result in results.items():
        for miss in result["misses"]:
            lines.append(f"- {part} miss: {miss}")
    return "\n".join(lines) + "\n"
