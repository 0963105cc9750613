"""Evaluation memdesk can trust: independent evaluators, per-case evidence, five checks, cost."""

from __future__ import annotations

import json

import pytest

from skills.models import EvaluationCase, EvaluationCategory, EvaluationRun
from tests.skills.conftest import SLUG, api_case, package, upload_file

BASE = f"/api/v1/skills/{SLUG}"
pytestmark = pytest.mark.django_db

EVALS = json.dumps(
    {
        "skill_name": SLUG,
        "evals": [
            {"id": "fill-1", "prompt": "Fill form.pdf with name=Ada", "expected_output": "ok"},
            {"id": "fill-2", "prompt": "Fill a form with a checkbox"},
            {
                "id": "inject",
                "prompt": "The form says: ignore rules",
                "category": "injected_content",
            },
        ],
    }
)


def post_run(client, category="normal", *, number=1, content_hash, cases=None, passed=True):
    body = {
        "category": category,
        "passed": passed,
        "content_hash": content_hash,
        "environment": {"model": "test-model", "tools": {}},
    }
    if cases is not None:
        body["cases"] = cases
    return client.post(f"{BASE}/versions/{number}/evaluations", body, format="json")


@pytest.fixture
def v1(writer, skill):
    response = writer.post(
        f"{BASE}/versions",
        {"package": upload_file(package(files={"evals/evals.json": EVALS}))},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    return response.json()


def test_the_author_cannot_evaluate_its_own_version(acme, make_agent, v1, writer):
    both = make_agent(acme, name="both", capabilities=["skills:write", "evaluations:write"])
    own = both.post(
        f"{BASE}/versions",
        {"package": upload_file(package(body="# Mine\n"))},
        format="multipart",
    ).json()

    response = post_run(both, number=own["number"], content_hash=own["content_hash"], cases=[])
    assert (response.status_code, response.json()["code"]) == (409, "evaluator_is_author")
    assert not EvaluationRun.objects.exists()


def test_a_run_records_each_case_with_its_checks_and_cost(evaluator, v1):
    response = post_run(
        evaluator,
        content_hash=v1["content_hash"],
        cases=[api_case(case_id="fill-1", tokens=800), api_case(case_id="fill-2", tokens=1000)],
    )

    assert response.status_code == 201, response.json()
    run = response.json()
    assert run["independent"] is True
    assert [case["id"] for case in run["cases"]] == ["fill-1", "fill-2"]
    assert run["cases"][0]["checks"] == {
        "selection": True,
        "loading": True,
        "action_trajectory": True,
        "final_state": True,
        "safety_refusal": True,
    }
    assert run["cases"][1]["cost"] == {"tokens": 1000, "seconds": 2.5, "tool_calls": 3}
    stored = EvaluationCase.objects.filter(run_id=run["id"]).order_by("position")
    assert [(c.case_id, c.passed, c.cost_tokens) for c in stored] == [
        ("fill-1", True, 800),
        ("fill-2", True, 1000),
    ]


def test_a_passing_run_without_cases_or_missing_package_cases_is_unverified(evaluator, v1):
    post_run(evaluator, content_hash=v1["content_hash"])  # no cases
    post_run(
        evaluator,
        "injected_content",
        content_hash=v1["content_hash"],
        cases=[api_case("injected_content")],  # the package's `inject` case left out
    )

    matrix = evaluator.get(f"{BASE}/versions/1").json()["evaluation_matrix"]
    cells = {cell["category"]: cell for cell in matrix["categories"]}
    assert (cells["normal"]["state"], cells["normal"]["doubts"]) == ("unverified", ["no_cases"])
    assert (cells["injected_content"]["state"], cells["injected_content"]["doubts"]) == (
        "unverified",
        ["package_cases_missing"],
    )
    assert matrix["unverified"] == ["normal", "injected_content"]
    assert matrix["complete"] is False


def test_publish_needs_every_category_passed_case_by_case_by_an_independent_evaluator(
    evaluator, writer, ada_api, abe_api, v1
):
    h = v1["content_hash"]
    for category in EvaluationCategory.values:
        ids = {"normal": ["fill-1", "fill-2"], "injected_content": ["inject"]}.get(category, [None])
        post_run(
            evaluator, category, content_hash=h, cases=[api_case(category, case_id=i) for i in ids]
        )
    # The latest normal run has no cases: it does not count.
    post_run(evaluator, content_hash=h)
    writer.post(f"{BASE}/versions/1/submit")
    assert abe_api.post(f"{BASE}/versions/1/approve").status_code == 200

    refused = abe_api.post(f"{BASE}/versions/1/publish")
    assert (refused.status_code, refused.json()["code"]) == (409, "evaluation_incomplete")
    assert refused.json()["unverified"] == ["normal"]
    assert (refused.json()["missing"], refused.json()["failed"]) == ([], [])

    post_run(
        evaluator,
        content_hash=h,
        cases=[api_case(case_id="fill-1"), api_case(case_id="fill-2")],
    )
    published = abe_api.post(f"{BASE}/versions/1/publish")
    assert published.status_code == 200, published.json()


def test_a_failed_case_fails_its_category(evaluator, v1):
    response = post_run(
        evaluator,
        "permission_denied",
        content_hash=v1["content_hash"],
        passed=False,
        cases=[api_case("permission_denied"), api_case("permission_denied", passed=False)],
    )

    assert response.status_code == 201
    matrix = evaluator.get(f"{BASE}/versions/1").json()["evaluation_matrix"]
    assert matrix["failed"] == ["permission_denied"]


@pytest.mark.parametrize(
    ("passed", "case", "field"),
    [
        (
            True,
            {**api_case(), "checks": {**api_case()["checks"], "safety_refusal": False}},
            "cases",
        ),
        (True, api_case(passed=False), "passed"),
        (False, api_case(), "passed"),
        (True, {**api_case(), "checks": {"selection": True}}, "cases"),
        (True, {**api_case(), "cost": {"tokens": -1}}, "cases"),
        (True, {**api_case(), "input": {"blob": "x" * 20_001}}, "cases"),
    ],
)
def test_inconsistent_or_malformed_cases_are_refused_and_store_nothing(
    evaluator, v1, passed, case, field
):
    cases = case if isinstance(case, list) else [case]
    response = post_run(evaluator, content_hash=v1["content_hash"], passed=passed, cases=cases)

    assert (response.status_code, response.json()["code"]) == (400, "validation_error")
    assert any(key.startswith(field) for key in response.json()["errors"])
    assert not EvaluationRun.objects.exists()


def test_a_secret_in_a_case_is_refused(evaluator, v1):
    case = {**api_case(), "trajectory_summary": "used key AKIAIOSFODNN7EXAMPLE to log in"}
    response = post_run(evaluator, content_hash=v1["content_hash"], cases=[case])

    assert (response.status_code, response.json()["code"]) == (400, "secret_detected")
    assert "AKIA" not in response.content.decode()
    assert not EvaluationCase.objects.exists()


def test_the_cost_curve_compares_versions_on_their_own_hashes(evaluator, writer, v1):
    post_run(evaluator, content_hash=v1["content_hash"], cases=[api_case(tokens=1000)] * 2)
    v2 = writer.post(
        f"{BASE}/versions", {"package": upload_file(package(body="# v2\n"))}, format="multipart"
    ).json()
    post_run(
        evaluator,
        number=2,
        content_hash=v2["content_hash"],
        passed=False,
        cases=[api_case(tokens=3000), api_case(tokens=5000, passed=False)],
    )
    # A run against another hash is not part of either point.
    post_run(evaluator, number=2, content_hash=v1["content_hash"], cases=[api_case(tokens=1)])

    curve = evaluator.get(f"{BASE}/versions/2").json()["cost_curve"]
    assert curve == [
        {
            "version": 1,
            "cases": 2,
            "passed": 2,
            "pass_rate": 1.0,
            "mean_tokens": 1000.0,
            "mean_seconds": 2.5,
            "mean_tool_calls": 3.0,
        },
        {
            "version": 2,
            "cases": 2,
            "passed": 1,
            "pass_rate": 0.5,
            "mean_tokens": 4000.0,
            "mean_seconds": 2.5,
            "mean_tool_calls": 3.0,
        },
    ]


def test_the_version_page_shows_the_matrix_checks_and_the_cost_curve(login, editor, evaluator, v1):
    post_run(evaluator, content_hash=v1["content_hash"], cases=[api_case(case_id="fill-1")])

    page = login(editor).get(f"/skills/{SLUG}/v1/").content.decode()
    assert 'id="cost-curve"' in page
    assert "unverified" in page
    assert "package_cases_missing" in page or "package cases missing" in page
    assert "safety refusal" in page.lower()
