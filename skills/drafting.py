"""A SKILL.md package drafted from experience claims (docs/skills.md, "Experience → skill draft").

Several successful runs of the same kind of task become one draft: steps
every run took form the procedure; steps only some runs took are listed
apart, for the editor to keep or drop (a restart that happened once is not a
precondition). The draft is a starting point for review, never a published
skill: it goes through upload checks, evaluation and four eyes like any
other package.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

MIN_SOURCES = 2
MAX_SOURCES = 20
_ZIP_TIME = (2025, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class Experience:
    claim_id: str
    subject: str
    predicate: str
    text: str
    value: Any

    @property
    def steps(self) -> list[str]:
        steps = self.value.get("steps") if isinstance(self.value, dict) else None
        if isinstance(steps, list) and all(isinstance(step, str) for step in steps):
            # One line each: a step is a list item, never a heading or a new section.
            return [" ".join(step.split()) for step in steps if step.strip()]
        return []


def skill_md(*, slug: str, description: str, experiences: Sequence[Experience]) -> str:
    meta = {
        "name": slug,
        "description": description,
        "metadata": {
            "memdesk-origin": "experience-draft",
            "memdesk-sources": str(len(experiences)),
        },
    }
    all_steps = [experience.steps for experience in experiences]
    common = [
        step for step in dict.fromkeys(all_steps[0]) if all(step in steps for steps in all_steps)
    ]
    some = [
        step
        for step in dict.fromkeys(step for steps in all_steps for step in steps)
        if step not in common
    ]
    lines = [
        f"# {slug}",
        "",
        f"Drafted from {len(experiences)} successful runs. Review every step, the inputs "
        "and the failure handling before submitting; evaluation decides whether it ships.",
        "",
        "## Procedure",
        "",
    ]
    if common:
        lines += [f"{index}. {step}" for index, step in enumerate(common, 1)]
    else:
        lines.append("No step was recorded in every run; write the procedure from the runs below.")
    if some:
        lines += ["", "## Seen in some runs only", "", "Keep a step only if it is needed:", ""]
        lines += [f"- {step}" for step in some]
    lines += ["", "## Runs this draft comes from", ""]
    lines += [
        f"- {' '.join((experience.text or experience.predicate).split())} "
        f"({experience.subject}, claim {experience.claim_id})"
        for experience in experiences
    ]
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)
    return f"---\n{front}---\n" + "\n".join(lines) + "\n"


def package_zip(text: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo("SKILL.md", date_time=_ZIP_TIME), text)
    return buffer.getvalue()
