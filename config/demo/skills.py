"""Demo skill for `make run`: one published version and a second one waiting in review.

v1 of ``pdf-forms`` is published (all six evaluations passed, approved by
someone other than its author). v2 adds the ``network`` capability with a
script that uses it, has five of six categories passed and one failed, and
waits in the ``skill_publication`` queue, so the console shows a flagged
capability change, an incomplete matrix and a non-empty queue.
"""

from __future__ import annotations

import io
import zipfile
from typing import Any

from accounts.actors import Actor
from accounts.models import Membership, Tenant
from skills import selectors, services
from skills.models import EvaluationCategory, EvaluationCheck, SkillVersion

SLUG = "pdf-forms"

_V1_SKILL_MD = """\
---
name: pdf-forms
description: Fill in a PDF form from structured field values and return the filled file.
version: "1.0"
risk: low
capabilities: []
triggers: ["fill in this PDF form", "complete the application form"]
inputs:
  form: path of the blank PDF form
  values: mapping of field name to value
outputs:
  filled: path of the filled PDF
dependencies:
  - name: pypdf
    version: "4.2"
---
# Fill a PDF form

1. List the form's fields and compare them with `values`.
2. Stop and ask when a required field has no value; never invent one.
3. Fill the fields, flatten the form, and return the path of the new file.

Failure handling: a field whose type does not match its value is reported,
not coerced. The original form is never modified.
"""

_V2_SKILL_MD = _V1_SKILL_MD.replace('version: "1.0"', 'version: "2.0"').replace(
    "capabilities: []", "capabilities: [network]"
) + (
    "\nForms given as an https URL are downloaded first with `scripts/fetch_form.py`;\n"
    "only hosts on the caller's allow-list are fetched.\n"
)

_FETCH_SCRIPT = """\
import sys

import httpx


def fetch(url: str) -> bytes:
    response = httpx.get(url, timeout=10, follow_redirects=False)
    response.raise_for_status()
    return response.content


if __name__ == "__main__":
    sys.stdout.buffer.write(fetch(sys.argv[1]))
"""

_FIELD_NOTES = """\
# Field types

Text fields take strings, check boxes take `true` or `false`, choice fields
take one of their listed options.
"""


def _zip(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, content in files.items():
            archive.writestr(zipfile.ZipInfo(path, date_time=(2025, 1, 1, 0, 0, 0)), content)
    return buffer.getvalue()


def _actor(tenant: Tenant, person: Any) -> Actor:
    """The acting person; pass a user or their Membership in `tenant`."""
    user = getattr(person, "user", person)
    membership = Membership.objects.get(tenant=tenant, user=user)
    return Actor.for_user(user, membership.role)


def _case(category: str, index: int, *, passed: bool, tokens: int) -> dict[str, Any]:
    checks = dict.fromkeys(EvaluationCheck.values, True)
    if not passed:
        # The injected text changed the plan: the run did not refuse it.
        checks.update(action_trajectory=False, safety_refusal=False)
    return {
        "case_id": "",
        "input": {"task": f"{category} case {index}"},
        "expected": {"outcome": "filled" if category == "normal" else "stopped and asked"},
        "trajectory_summary": f"selected pdf-forms, loaded the body, {category} handled"
        if passed
        else "pdf-forms obeyed a command planted in a form field",
        "passed": passed,
        **checks,
        "cost_tokens": tokens + 150 * index,
        "cost_seconds": 3.0 + index,
        "cost_tool_calls": 2 + index,
        **(_no_skill_baseline(index) if category == "normal" else {}),
    }


def _no_skill_baseline(index: int) -> dict[str, Any]:
    # The same normal case without the skill: the agent filled the first form but invented
    # a value for the second's required field, at about 1500 tokens a case. Both versions
    # beat it (two of two), v1 cheaper, v2 within the cost factor (1.45 times).
    return {
        "baseline_passed": index == 0,
        "baseline_cost_tokens": 1400 + 200 * index,
        "baseline_cost_seconds": 4.0 + index,
        "baseline_cost_tool_calls": 3 + index,
    }


def _evaluate(
    tenant: Tenant,
    version: SkillVersion,
    *,
    runner: Actor,
    tokens: int,
    failed: tuple[str, ...] = (),
) -> None:
    # `runner` is a person other than the author: only independent runs count, and
    # memdesk itself is nobody who could vouch for a skill.
    for category in EvaluationCategory.values:
        passed = category not in failed
        services.evaluation_record(
            tenant=tenant,
            version=version,
            actor=runner,
            category=category,
            passed=passed,
            content_hash=version.content_hash,
            details={"suite": "demo regression"},
            environment={"model": "demo-model-2025-01", "tools": {}, "runtime": "python 3.12"},
            cases=[_case(category, i, passed=passed or i == 0, tokens=tokens) for i in range(2)],
        )


def seed_skills(*, tenant: Tenant, author: Any, approver: Any) -> None:
    """Create the demo skill unless it exists. `approver` must be an admin other than `author`."""
    if selectors.skill_get(tenant=tenant, slug=SLUG) is not None:
        return
    writer, admin = _actor(tenant, author), _actor(tenant, approver)
    skill = services.skill_create(tenant=tenant, slug=SLUG, name="PDF forms", actor=writer)

    v1, _ = services.skill_version_upload(
        tenant=tenant,
        skill=skill,
        data=_zip({"SKILL.md": _V1_SKILL_MD, "references/field-types.md": _FIELD_NOTES}),
        actor=writer,
    )
    _evaluate(tenant, v1, runner=admin, tokens=1200)
    services.skill_version_submit(tenant=tenant, version=v1, actor=writer)
    services.skill_version_approve(
        tenant=tenant, version=v1, actor=admin, reason="Stops on missing values; no side effects."
    )
    services.skill_version_publish(
        tenant=tenant, version=v1, actor=admin, reason="First release of the form filler."
    )

    v2, _ = services.skill_version_upload(
        tenant=tenant,
        skill=skill,
        data=_zip(
            {
                "SKILL.md": _V2_SKILL_MD,
                "references/field-types.md": _FIELD_NOTES,
                "scripts/fetch_form.py": _FETCH_SCRIPT,
            }
        ),
        actor=writer,
    )
    _evaluate(tenant, v2, runner=admin, tokens=2100, failed=("injected_content",))
    services.skill_version_submit(tenant=tenant, version=v2, actor=writer)
