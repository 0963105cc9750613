"""The screen's benchmark: detection per attack class, false positives, time per claim.

Reads the labelled corpus in testing/corpus. Each attack is judged as an
agent could send it: alone in `text`, split between `text` and `value`, nested
in a value, and as a scope value; each secret in `text` and nested under a key.
Benign notes are submitted as whole claims, and the time of the screening a
claim goes through (identity fields, sources, then the gate's content rules)
is measured per claim with the caches cleared, so no claim is judged twice.
No database is needed.
"""

from __future__ import annotations

import os
import platform
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from common.screen import (
    decode,
    find_secrets_in_strings,
    find_secrets_in_text,
    find_secrets_in_value,
    normalize,
)
from memory.claims import gate
from testing.corpus import labelled, plain

NOW = datetime(2026, 11, 30, tzinfo=UTC)
TIMING_ROUNDS = 5


def _candidate(*, text: str = "", value: Any = None, scope: dict[str, str] | None = None):
    return gate.Candidate(
        kind="fact",
        predicate="note",
        value=value,
        text=text,
        authority="agent_inferred",
        basis="inference",
        available_at=NOW,
        source_count=1,
        subject="user:alice",
        scope=scope or {"project": "crm"},
    )


def _screen(candidate: gate.Candidate, source_uri: str) -> str:
    """What `claim_submit` screens: identity fields, the source, then the gate."""
    identity = [candidate.subject, candidate.predicate]
    if (
        find_secrets_in_strings(identity)
        or find_secrets_in_value(candidate.scope)
        or find_secrets_in_text(source_uri)
    ):
        return "secret_detected"
    return gate.evaluate(candidate, active=None).reasons[0]


def _split(text: str) -> gate.Candidate:
    words = text.split(" ")
    half = max(1, len(words) // 2)
    return _candidate(text=" ".join(words[:half]), value=" ".join(words[half:]) or None)


INJECTION_PLACEMENTS: dict[str, Callable[[str], gate.Candidate]] = {
    "text": lambda t: _candidate(text=t),
    "split text+value": _split,
    "nested value": lambda t: _candidate(text="note", value={"a": {"b": ["ok", t]}}),
    "scope value": lambda t: _candidate(text="note", scope={"project": t}),
}
SECRET_PLACEMENTS: dict[str, Callable[[str], gate.Candidate]] = {
    "text": lambda t: _candidate(text=t),
    "nested value": lambda t: _candidate(text="note", value={"setup": [{"step": t}]}),
}


def _table(
    samples: list[tuple[str, str]],
    placements: dict[str, Callable[[str], gate.Candidate]],
    reason: str,
    title: str,
) -> list[str]:
    """One row per class: how many samples the screen caught in each placement."""
    header = f"| {title} | samples | " + " | ".join(placements) + " |"
    lines = [header, "|---|---:|" + "---:|" * len(placements)]
    totals = dict.fromkeys(placements, 0)
    for label in sorted({label for label, _ in samples}):
        texts = [t for c, t in samples if c == label]
        cells = []
        for where, build in placements.items():
            caught = sum(_screen(build(t), "chat://s1/m1") == reason for t in texts)
            totals[where] += caught
            cells.append(f"{caught}/{len(texts)}")
        lines.append(f"| {label} | {len(texts)} | " + " | ".join(cells) + " |")
    rates = " | ".join(f"**{100 * totals[w] / len(samples):.0f}%**" for w in placements)
    lines.append(f"| **detection rate** | {len(samples)} | {rates} |")
    return lines


def _timings(notes: list[str]) -> tuple[list[float], list[float]]:
    """(CPU ms, wall-clock ms) per claim. CPU time leaves out time the process was
    preempted, which on a shared machine dominates the wall-clock tail."""
    cpu, wall = [], []
    for _ in range(TIMING_ROUNDS):
        for note in notes:
            normalize.clear_cache()
            decode.clear_cache()
            candidate = _candidate(text=note, value={"summary": note[:60], "tags": ["crm", "q4"]})
            started_cpu, started = time.thread_time(), time.perf_counter()
            _screen(candidate, "https://tickets.example.com/4821")
            wall.append((time.perf_counter() - started) * 1000)
            cpu.append((time.thread_time() - started_cpu) * 1000)
    return cpu, wall


def _p50_p95(times: list[float]) -> str:
    p95 = statistics.quantiles(times, n=100)[94]
    return f"p50 {statistics.median(times):.3f} ms, p95 {p95:.3f} ms"


def report() -> str:
    attacks = labelled("injection_attacks.txt")
    secrets = labelled("secrets.txt")
    notes = plain("benign_notes.txt")
    secretlike = plain("benign_secretlike.txt")
    heldout = labelled("injection_heldout.txt")
    heldout_notes = plain("benign_heldout.txt")
    _screen(_candidate(text="warm-up"), "chat://s1/m1")  # compile the detectors once
    flagged_notes = sum(
        _screen(_candidate(text=n), "chat://s1/m1") != "unverified_authority" for n in notes
    )
    flagged_secretlike = sum(bool(find_secrets_in_text(t)) for t in secretlike)
    caught_heldout = sum(
        _screen(_candidate(text=t), "chat://s1/m1") == "instruction_injection" for _, t in heldout
    )
    flagged_heldout = sum(
        _screen(_candidate(text=n), "chat://s1/m1") != "unverified_authority" for n in heldout_notes
    )
    cpu, wall = _timings(notes)
    load = os.getloadavg()[0]
    lines = [
        "## Screen: injections and secrets",
        "",
        f"Run `python -m bench screen` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; Python "
        f"{platform.python_version()}, {os.cpu_count()} CPUs. Written by bench/screen.py from "
        "the labelled corpus in testing/corpus; see bench/README.md.",
        "",
        *_table(attacks, INJECTION_PLACEMENTS, "instruction_injection", "injection class"),
        "",
        *_table(secrets, SECRET_PLACEMENTS, "secret_detected", "secret class"),
        "",
        "| benign set | samples | flagged | false positives |",
        "|---|---:|---:|---:|",
        f"| notes mentioning instructions, prompts, rules, passwords, keys (as claims) "
        f"| {len(notes)} | {flagged_notes} | {100 * flagged_notes / len(notes):.1f}% |",
        f"| digests, ids, commit ids, URLs, certificates, prose about keys (secret detectors) "
        f"| {len(secretlike)} | {flagged_secretlike} "
        f"| {100 * flagged_secretlike / len(secretlike):.1f}% |",
        "",
        "Held out (written after the signals were tuned, never used to tune them; an "
        "estimate for phrasings nobody has written down yet):",
        "",
        "| held-out set | samples | flagged | rate |",
        "|---|---:|---:|---:|",
        f"| attacks (in `text`) | {len(heldout)} | {caught_heldout} "
        f"| {100 * caught_heldout / len(heldout):.0f}% detected |",
        f"| benign notes (as claims) | {len(heldout_notes)} | {flagged_heldout} "
        f"| {100 * flagged_heldout / len(heldout_notes):.1f}% false positives |",
        "",
        "Screening time per claim (identity fields, source uri, then the gate's content "
        f"rules; caches cleared before each claim), {len(cpu)} claims ({len(notes)} benign "
        f"notes x {TIMING_ROUNDS} rounds): CPU time {_p50_p95(cpu)}; wall clock "
        f"{_p50_p95(wall)} (load average {load:.1f} on {os.cpu_count()} CPUs while measuring).",
        "",
    ]
    return "\n".join(lines)
