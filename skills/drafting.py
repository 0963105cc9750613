"""A SKILL.md package drafted from experience claims (docs/skills.md, "Experience → skill draft").

Several successful runs of the same kind of task become one draft: steps
every successful run took form the procedure; steps only some took are listed
apart, for the editor to keep or drop (a restart that happened once is not a
precondition). Failed runs of the same task, when given, are the contrast: a
step every success took and no failure did is marked as the one that made the
difference, and each failure's cause and the steps only failures took become
the pitfalls.

A skill is for any customer, not the one a run happened to serve: the
subjects' keys and the personal values a run recorded (its `value` fields
other than the outcome, steps and failure) are replaced by placeholders
(`{{customer}}`, `{{order}}`…) declared as the manifest's `inputs`. The draft
therefore names no person, and the run list names claims by id only.

The draft is a starting point for review, never a published skill: it goes
through upload checks, evaluation and four eyes like any other package.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

MIN_SOURCES = 2
MAX_SOURCES = 20
_ZIP_TIME = (2025, 1, 1, 0, 0, 0)
SUCCESS = "success"
# The fields of an experience's value that describe the run rather than whom it served.
RUN_FIELDS = frozenset({"outcome", "steps", "failure", "error", "cause", "duration_ms", "cost"})
FAILURE_FIELDS = ("failure", "error", "cause")
# What a subject's kind becomes as an input: a person a skill serves is its customer.
SUBJECT_INPUTS = {"user": "customer", "person": "customer", "customer": "customer"}
_SLOT = re.compile(r"[^a-z0-9_]+")
# A value shorter than this is not replaced: "ok" or "3" would match inside ordinary words.
MIN_VALUE_CHARS = 3


def _one_line(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class Experience:
    claim_id: str
    subject: str
    predicate: str
    text: str
    value: Any

    @property
    def fields(self) -> dict[str, Any]:
        return self.value if isinstance(self.value, dict) else {}

    @property
    def succeeded(self) -> bool:
        return self.fields.get("outcome") == SUCCESS

    @property
    def steps(self) -> list[str]:
        steps = self.fields.get("steps")
        if isinstance(steps, list) and all(isinstance(step, str) for step in steps):
            # One line each: a step is a list item, never a heading or a new section.
            return [_one_line(step) for step in steps if step.strip()]
        return []

    @property
    def failure(self) -> str:
        for name in FAILURE_FIELDS:
            if isinstance(self.fields.get(name), str) and self.fields[name].strip():
                return _one_line(self.fields[name])
        return _one_line(self.text or self.predicate)


def _slot(name: str) -> str:
    slot = _SLOT.sub("_", name.lower()).strip("_")
    return slot if slot and slot[0].isalpha() else f"input_{slot}".rstrip("_")


class Placeholders:
    """Subject keys and personal values → `{{input}}`, longest first."""

    def __init__(self, experiences: Sequence[Experience]) -> None:
        self.inputs: dict[str, str] = {}
        found: dict[str, str] = {}
        for experience in experiences:
            kind, _, ident = experience.subject.partition(":")
            name = SUBJECT_INPUTS.get(kind, _slot(kind or "subject"))
            self.inputs.setdefault(name, f"the {kind or 'subject'} this run is for")
            found[experience.subject] = name
            if len(ident) >= MIN_VALUE_CHARS:
                found.setdefault(ident, name)
            for key, value in experience.fields.items():
                if key in RUN_FIELDS or not isinstance(value, str | int):
                    continue
                text = str(value).strip()
                if len(text) >= MIN_VALUE_CHARS:
                    slot = _slot(key)
                    self.inputs.setdefault(slot, f"the run's {key}")
                    found.setdefault(text, slot)
        ordered = sorted(found, key=len, reverse=True)
        self._names = {value.lower(): found[value] for value in ordered}
        self._pattern = (
            re.compile(
                r"(?<![\w:])(?:" + "|".join(re.escape(v) for v in ordered) + r")(?![\w])",
                re.IGNORECASE,
            )
            if ordered
            else None
        )

    def __call__(self, text: str) -> str:
        if self._pattern is None:
            return text
        return self._pattern.sub(lambda m: "{{" + self._names[m.group(0).lower()] + "}}", text)


def skill_md(*, slug: str, description: str, experiences: Sequence[Experience]) -> str:
    fill = Placeholders(experiences)
    successes = [e for e in experiences if e.succeeded]
    failures = [e for e in experiences if not e.succeeded]
    meta = {
        "name": slug,
        "description": fill(description),
        "inputs": {
            name: {"type": "string", "required": True, "description": about}
            for name, about in fill.inputs.items()
        },
        "metadata": {
            "memdesk-origin": "experience-draft",
            "memdesk-sources": str(len(successes)),
            **({"memdesk-failures": str(len(failures))} if failures else {}),
        },
    }
    all_steps = [[fill(step) for step in e.steps] for e in successes]
    failed_steps = [[fill(step) for step in e.steps] for e in failures]
    common = [
        step for step in dict.fromkeys(all_steps[0]) if all(step in steps for steps in all_steps)
    ]
    some = [
        step
        for step in dict.fromkeys(step for steps in all_steps for step in steps)
        if step not in common
    ]
    # What the successes did that no failure did: the likely difference.
    decisive = {step for step in common if failures and not any(step in s for s in failed_steps)}
    lines = [
        f"# {slug}",
        "",
        f"Drafted from {len(successes)} successful runs"
        + (f" and {len(failures)} failed ones" if failures else "")
        + ". Review every step, the inputs and the failure handling before submitting; "
        "evaluation decides whether it ships.",
        "",
        "## Inputs",
        "",
        *(f"- `{{{{{name}}}}}`: {about}" for name, about in fill.inputs.items()),
        "",
        "## Procedure",
        "",
    ]
    if common:
        lines += [
            f"{index}. {step}"
            + (" (every successful run did this; no failed run did)" if step in decisive else "")
            for index, step in enumerate(common, 1)
        ]
    else:
        lines.append("No step was recorded in every run; write the procedure from the runs below.")
    if some:
        lines += ["", "## Seen in some runs only", "", "Keep a step only if it is needed:", ""]
        lines += [f"- {step}" for step in some]
    if failures:
        only_failed = [
            step
            for step in dict.fromkeys(step for steps in failed_steps for step in steps)
            if not any(step in steps for steps in all_steps)
        ]
        lines += ["", "## Pitfalls", "", "What went wrong in the failed runs:", ""]
        lines += [f"- {fill(failure)}" for failure in dict.fromkeys(e.failure for e in failures)]
        if only_failed:
            lines += ["", "Steps only failed runs took:", ""]
            lines += [f"- {step}" for step in only_failed]
    lines += ["", "## Runs this draft comes from", ""]
    lines += [
        f"- {'succeeded' if experience.succeeded else 'failed'}: claim {experience.claim_id}"
        for experience in experiences
    ]
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)
    return f"---\n{front}---\n" + "\n".join(lines) + "\n"


def package_zip(text: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo("SKILL.md", date_time=_ZIP_TIME), text)
    return buffer.getvalue()
