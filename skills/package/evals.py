"""`evals/evals.json`: the evaluation cases a package brings with it.

The file is the Agent Skills convention (``{"skill_name", "evals": [{"id",
"prompt", "expected_output", ...}]}``); memdesk adds an optional
``category`` per case, one of the six regression categories (default
``normal``). Cases are kept in the manifest, so evaluators know which cases
a run of each category must report, and a run that leaves one out does not
count.
"""

from __future__ import annotations

import json
import re

from skills.models import EvaluationCategory
from skills.package.errors import PackageError

EVALS_JSON = "evals/evals.json"
MAX_CASES = 200
PROMPT_MAX = 10_000
CASE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def parse_evals(texts: dict[str, str], *, slug: str) -> list[dict[str, str]]:
    """The package's cases, normalised; [] when it has no evals/evals.json."""
    text = texts.get(EVALS_JSON)
    if text is None:
        return []
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _invalid(f"is not valid JSON (line {exc.lineno}, column {exc.colno}).") from exc
    if not isinstance(data, dict) or not isinstance(data.get("evals"), list):
        raise _invalid('must be an object with an "evals" list.')
    if data.get("skill_name") not in (None, slug):
        raise _invalid(f"names the skill {data['skill_name']!r}; it belongs to {slug!r}.")
    if len(data["evals"]) > MAX_CASES:
        raise _invalid(f"holds {len(data['evals'])} cases; at most {MAX_CASES}.")
    cases: dict[str, dict[str, str]] = {}
    for index, item in enumerate(data["evals"]):
        where = f"evals[{index}]"
        if not isinstance(item, dict):
            raise _invalid(f"{where} must be an object.")
        case_id = item.get("id")
        if isinstance(case_id, int) and not isinstance(case_id, bool):
            case_id = str(case_id)
        if not isinstance(case_id, str) or not CASE_ID.fullmatch(case_id):
            raise _invalid(f"{where}.id must be a number or a short name.")
        if case_id in cases:
            raise _invalid(f"{where}.id repeats the case {case_id!r}.")
        prompt = item.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip() or len(prompt) > PROMPT_MAX:
            raise _invalid(f"{where}.prompt must be text of 1 to {PROMPT_MAX} characters.")
        expected = item.get("expected_output", "")
        if not isinstance(expected, str) or len(expected) > PROMPT_MAX:
            raise _invalid(f"{where}.expected_output must be text.")
        category = item.get("category", EvaluationCategory.NORMAL.value)
        if category not in EvaluationCategory.values:
            raise _invalid(
                f"{where}.category must be one of {', '.join(EvaluationCategory.values)}."
            )
        cases[case_id] = {
            "id": case_id,
            "category": category,
            "prompt": prompt,
            "expected": expected,
        }
    return list(cases.values())


def _invalid(problem: str) -> PackageError:
    return PackageError(code="evals_invalid", detail=f"{EVALS_JSON} {problem}", path=EVALS_JSON)
