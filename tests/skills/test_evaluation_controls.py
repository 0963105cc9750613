"""Evaluation with its controls: the environment named, a no-skill baseline to beat at a
bounded cost, and unseen-task and paired-composition runs shown beside the matrix."""

from __future__ import annotations

import pytest

from skills.models import EvaluationCategory, EvaluationRun
from tests.skills.conftest import SLUG, api_case, package, upload_file

BASE = f"/api/v1/skills/{SLUG}"
ENVIRONMENT = {"model": "test-model-2025", "tools": {"pdftk": "3.3"}, "runtime": "py3.12"}
pytestmark = pytest.mark.django_db


def run(client, category="normal", *, number=1, content_hash, cases, **extra):
    body = {
        "category": category,
        "passed": all(case["result"] == "passed" for case in cases),
        "content_hash": content_hash,
        "environment": ENVIRONMENT,
        "cases": cases,
        **extra,
    }
    return client.post(f"{BASE}/versions/{number}/evaluations", body, format="json")


def with_baseline(case, *, result, tokens):
    return {**case, "baseline": {"result": result, "cost": {"tokens": tokens, "seconds": 1.0}}}


@pytest.fixture
def v1(writer):
    assert writer.post("/api/v1/skills", {"slug": SLUG}, format="json").status_code == 201
    response = writer.post(
        f"{BASE}/versions",
        {"package": upload_file(package(**{"allowed-tools": "pdftk"}))},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    return response.json()


def approved_with_runs(writer, evaluator, ada_api, v1, normal_cases):
    for category in EvaluationCategory.values:
        cases = normal_cases if category == "normal" else [api_case(category)]
        response = run(evaluator, category, content_hash=v1["content_hash"], cases=cases)
        assert response.status_code == 201, response.json()
    assert writer.post(f"{BASE}/versions/1/submit").status_code == 200
    assert ada_api.post(f"{BASE}/versions/1/approve", {}, format="json").status_code == 200


def test_a_new_run_must_name_its_model_and_the_tools_versions(evaluator, v1):
    bare = evaluator.post(
        f"{BASE}/versions/1/evaluations",
        {
            "category": "normal",
            "passed": True,
            "content_hash": v1["content_hash"],
            "cases": [api_case()],
        },
        format="json",
    )
    assert (bare.status_code, bare.json()["code"]) == (400, "environment_required")

    lacking_tool = evaluator.post(
        f"{BASE}/versions/1/evaluations",
        {
            "category": "normal",
            "passed": True,
            "content_hash": v1["content_hash"],
            "environment": {"model": "m", "tools": {}},
            "cases": [api_case()],
        },
        format="json",
    )
    assert (lacking_tool.status_code, lacking_tool.json()["code"]) == (400, "environment_required")
    assert "pdftk" in lacking_tool.json()["detail"]
    assert not EvaluationRun.objects.exists()

    named = run(evaluator, content_hash=v1["content_hash"], cases=[api_case()])
    assert named.status_code == 201, named.json()
    assert named.json()["environment"] == ENVIRONMENT


def test_publish_needs_a_baseline_on_the_normal_cases(writer, evaluator, ada_api, abe_api, v1):
    no_baseline = [{key: value for key, value in api_case().items() if key != "baseline"}]
    approved_with_runs(writer, evaluator, ada_api, v1, no_baseline)

    refused = abe_api.post(f"{BASE}/versions/1/publish", {}, format="json")

    assert (refused.status_code, refused.json()["code"]) == (409, "baseline_not_beaten")
    assert refused.json()["verdict"] == "no_baseline"
    assert abe_api.get(f"{BASE}/versions/1").json()["status"] == "approved"


def test_publish_refuses_a_skill_no_better_than_going_without(
    writer, evaluator, ada_api, abe_api, v1
):
    # Without the skill the agent passes the case too, and more cheaply.
    approved_with_runs(
        writer, evaluator, ada_api, v1, [with_baseline(api_case(), result="passed", tokens=500)]
    )

    refused = abe_api.post(f"{BASE}/versions/1/publish", {}, format="json")

    assert (refused.status_code, refused.json()["code"]) == (409, "baseline_not_beaten")
    assert (refused.json()["passed"], refused.json()["baseline_passed"]) == (1, 1)
    assert refused.json()["verdict"] == "not_better"


def test_publish_refuses_a_skill_costing_more_than_the_factor(
    writer, evaluator, ada_api, abe_api, v1, settings
):
    settings.SKILL_BASELINE_COST_FACTOR = 1.5
    # It wins the case but costs 2000 tokens against 1000 without it: over 1.5 times.
    approved_with_runs(
        writer,
        evaluator,
        ada_api,
        v1,
        [with_baseline(api_case(tokens=2000), result="failed", tokens=1000)],
    )

    refused = abe_api.post(f"{BASE}/versions/1/publish", {}, format="json")
    assert (refused.status_code, refused.json()["verdict"]) == (409, "too_costly")

    settings.SKILL_BASELINE_COST_FACTOR = 2.0
    published = abe_api.post(f"{BASE}/versions/1/publish", {}, format="json")
    assert published.status_code == 200, published.json()
    detail = abe_api.get(f"{BASE}/versions/1").json()
    assert detail["baseline"]["verdict"] == "beats"
    assert (detail["baseline"]["mean_tokens"], detail["baseline"]["baseline_mean_tokens"]) == (
        2000,
        1000,
    )


def test_control_runs_are_recorded_shown_and_never_fill_the_matrix(
    writer, evaluator, v1, publish, login, editor
):
    publish("report-writer")
    unseen = run(
        evaluator,
        kind="unseen_task",
        content_hash=v1["content_hash"],
        cases=[api_case(), api_case(passed=False)],
    )
    assert unseen.status_code == 201, unseen.json()
    assert unseen.json()["kind"] == "unseen_task"
    paired = run(
        evaluator,
        kind="paired_composition",
        paired_with={"skill": "report-writer", "number": 1},
        content_hash=v1["content_hash"],
        cases=[api_case()],
    )
    assert paired.status_code == 201, paired.json()
    assert paired.json()["paired_with"] == {"skill": "report-writer", "number": 1}
    unpaired = run(
        evaluator, kind="paired_composition", content_hash=v1["content_hash"], cases=[api_case()]
    )
    assert (unpaired.status_code, unpaired.json()["code"]) == (400, "validation_error")
    nowhere = run(
        evaluator,
        kind="paired_composition",
        paired_with={"skill": "no-such-skill", "number": 1},
        content_hash=v1["content_hash"],
        cases=[api_case()],
    )
    assert nowhere.status_code == 400

    detail = evaluator.get(f"{BASE}/versions/1").json()
    assert detail["evaluation_matrix"]["missing"] == EvaluationCategory.values
    assert [control["kind"] for control in detail["controls"]] == [
        "paired_composition",
        "unseen_task",
    ]
    page = login(editor).get(f"/skills/{SLUG}/v1/").content.decode()
    assert 'id="evaluation-controls"' in page
    assert "Unseen task" in page and "Paired composition" in page
    assert 'href="/skills/report-writer/v1/"' in page
