"""Schemathesis over the whole OpenAPI schema, against the real database and Redis.

Every operation runs the coverage phase (boundary and invalid values derived
from the schema) and a short fuzzing phase, once as an agent token with every
capability and once as an admin's console session (who is also an end user
with a subject, so `/me/` answers). The checks: no server error, responses
match the schema for their documented status, and the content type is the
documented one. Examples stay few so the file runs in about a minute on two cores.
"""

from __future__ import annotations

import copy
import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, transaction
from django.middleware.csrf import _get_new_csrf_string
from django.test import Client
from django.utils import timezone
from hypothesis import HealthCheck, settings
from rest_framework.test import APIClient
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from accounts.models import Capability, Role
from accounts.services import agent_token_create, member_create, subject_link, tenant_create
from config.wsgi import application
from reviews.models import ReviewItem
from tests.skills.conftest import build_zip, skill_md, upload_file

# Small by default so the file runs in about a minute; raise it for a deeper run.
MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "25"))
# The admin's session repeats the agent's run where both get in; fewer examples
# keep the whole file to a few minutes on two cores.
SESSION_MAX_EXAMPLES = max(1, MAX_EXAMPLES // 5)
STATEFUL_MAX_STEPS = int(os.environ.get("SCHEMATHESIS_STATEFUL_STEPS", "10"))
CONFIG = schemathesis.Config.from_dict(
    {
        "phases": {
            "examples": {"enabled": False},
            "coverage": {"enabled": True},
            "fuzzing": {"enabled": True},
            "stateful": {"enabled": True, "max-steps": STATEFUL_MAX_STEPS},
        },
        "generation": {"max-examples": MAX_EXAMPLES, "database": "none", "deterministic": True},
        # A request the schema refuses may be refused for its size before it is read:
        # 413 `payload_too_large` (a `text` far beyond its maxLength, over 1 MB) is a
        # refusal too.
        "checks": {
            "negative_data_rejection": {
                "expected-statuses": [400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 428, 429]
            }
        },
    }
)
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    response_schema_conformance,
    content_type_conformance,
    response_headers_conformance,
    negative_data_rejection,
]
REPLAY_CHECKS = [check for check in CHECKS if check is not negative_data_rejection]


# Loaded at collection: the schema endpoint needs neither the database nor a caller.
schema = schemathesis.openapi.from_wsgi("/api/schema/", application, config=CONFIG)


@pytest.fixture(autouse=True)
def _fuzzing_settings(db, settings) -> None:
    # The fuzzer sends far more requests than a client would in a minute.
    settings.API_THROTTLE_RATES = {}
    # Unknown paths and errors must be problems in the mode developers run, too.
    settings.DEBUG = True


def _detach_request_signals() -> None:
    # The app is called in-process inside the test's transaction; like Django's
    # test client, keep the request signals from closing that connection.
    # Django's test client connects them again after each request, so this
    # runs after any seeding through it.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)


@pytest.fixture
def in_process_app() -> Iterator[None]:
    _detach_request_signals()
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def callers() -> dict[str, dict[str, Any]]:
    tenant = tenant_create(slug="fuzz", name="Fuzz")[0]
    token = agent_token_create(
        tenant=tenant,
        name="fuzzer",
        capabilities=Capability.values,
        max_authority="user_explicit",
    )
    admin = member_create(
        tenant=tenant, username="fuzz-admin", password="correct horse battery", role=Role.ADMIN
    ).user
    subject_link(tenant=tenant, user=admin, subject_key="user:fuzz-admin")
    browser = Client()
    browser.force_login(admin)
    csrf = _get_new_csrf_string()
    session = browser.cookies["sessionid"].value
    return {
        "agent": {"headers": {"Authorization": f"Bearer {token.secret}"}},
        "session": {
            "headers": {"X-CSRFToken": csrf},
            "cookies": {"sessionid": session, "csrftoken": csrf},
        },
    }


@pytest.fixture
def real_objects(callers) -> dict[str, str]:
    """One of each object, made through the API, so responses with content are checked too."""
    agent = APIClient()
    agent.credentials(HTTP_AUTHORIZATION=callers["agent"]["headers"]["Authorization"])
    now = timezone.now().isoformat()
    event = agent.post(
        "/api/v1/events",
        {
            "subject": "user:fuzz-admin",
            "kind": "user_statement",
            "text": "I live in Lyon",
            "observed_at": now,
        },
        format="json",
    ).json()
    claim = agent.post(
        "/api/v1/claims",
        {
            "subject": "user:fuzz-admin",
            "kind": "fact",
            "predicate": "home_city",
            "value": {"city": "Lyon", "since": 2020},
            "text": "Lives in Lyon",
            "scope": {"project": "crm"},
            "authority": "user_explicit",
            "basis": "reported",
            "sources": [{"event": event["id"]}, {"uri": "chat://s1/m7", "observed_at": now}],
        },
        format="json",
    ).json()
    receipt = agent.post(
        "/api/v1/receipts",
        {
            "operation": "articles.create",
            "target": "https://blog.example/api",
            "intent": {"title": "t"},
            "idempotency_key": "fuzz-1",
        },
        format="json",
    ).json()
    agent.put(
        "/api/v1/checkpoints/fuzz-task",
        {"input_fingerprint": "f1", "stage": "draft", "state": {"n": 1}},
        format="json",
    )
    agent.post("/api/v1/skills", {"slug": "fuzz-skill"}, format="json")
    package = build_zip({"SKILL.md": skill_md("fuzz-skill"), "references/notes.md": "# Notes\n"})
    agent.post(
        "/api/v1/skills/fuzz-skill/versions",
        {"package": upload_file(package)},
        format="multipart",
    )
    item = ReviewItem.objects.filter(target_id=claim["id"]).first()
    return {
        "event_id": event["id"],
        "claim_id": claim["id"],
        "receipt_id": receipt["id"],
        "task_key": "fuzz-task",
        "item_id": str(item.pk) if item else "1",
        "subject": "user:fuzz-admin",
        "slug": "fuzz-skill",
        "number": "1",
        "a": "1",
        "b": "1",
        "label": "production",
        "path": "references/notes.md",
    }


@schema.parametrize()
@settings(
    deadline=None,
    suppress_health_check=list(HealthCheck),
    max_examples=MAX_EXAMPLES,
    derandomize=True,
    database=None,
)
def test_api_answers_every_request_within_its_schema(
    case: Any, callers, in_process_app, request
) -> None:
    for caller in callers_for(case.operation.path):
        if caller == "session" and _session_budget_spent(
            case, len(callers_for(case.operation.path))
        ):
            continue
        case.call_and_validate(checks=CHECKS, **callers[caller])
    if not case.path_parameters:
        return
    # Made once per operation, and only for operations that name objects.
    real_objects = request.getfixturevalue("real_objects")
    _detach_request_signals()
    if set(case.path_parameters) <= set(real_objects):
        # The same request against objects that exist, so the success bodies
        # are checked against the schema too, not only the 404s.
        case.path_parameters = {name: real_objects[name] for name in case.path_parameters}
        for caller in callers_for(case.operation.path):
            # The real ids may have replaced the very values that made the case
            # invalid, so a success here is no accepted negative data.
            case.call_and_validate(checks=REPLAY_CHECKS, **callers[caller])


_session_cases: dict[str, int] = {}


def _session_budget_spent(case: Any, callers: int) -> bool:
    # Where the agent runs too, the session repeats only the first few cases.
    if callers == 1:
        return False
    label = case.operation.label
    _session_cases[label] = _session_cases.get(label, 0) + 1
    return _session_cases[label] > SESSION_MAX_EXAMPLES


def callers_for(path: str) -> tuple[str, ...]:
    # People's endpoints answer agents a 403 before reading anything, and
    # agents' endpoints validate a session's input the same way, so each side
    # is fuzzed where it gets past the door; skills serve both.
    if path.startswith(("/api/v1/me/", "/api/v1/reviews", "/api/v1/deletions")):
        return ("session",)
    if path.startswith("/api/v1/skills"):
        return ("agent", "session")
    return ("agent",)


# -- responses that once broke the schema, each checked with content in it ------------

CONFORMS = [response_schema_conformance, content_type_conformance, not_a_server_error]


def _call(path: str, method: str, caller: dict[str, Any], **parts: Any) -> Any:
    if "body" in parts:
        parts.setdefault("media_type", "application/json")
    case = schema[path][method].Case(**parts)
    response = case.call(**caller)
    case.validate_response(response, checks=CONFORMS)
    return response


def test_gate_rules_match_the_schema(callers, real_objects, in_process_app):
    response = _call("/api/v1/gate/rules", "GET", callers["agent"])
    assert response.status_code == 200
    assert response.json()["results"]


def test_skills_list_and_detail_match_the_schema(callers, real_objects, in_process_app):
    for caller in ("agent", "session"):
        listed = _call("/api/v1/skills", "GET", callers[caller])
        assert "fuzz-skill" in [s["slug"] for s in listed.json()["results"]]
        # A skill with no version yet: latest_version and production are null.
        created = _call("/api/v1/skills", "POST", callers[caller], body={"slug": f"new-{caller}"})
        assert created.status_code == 201
        assert created.json()["latest_version"] is None
        detail = _call(
            "/api/v1/skills/{slug}", "GET", callers[caller], path_parameters={"slug": "fuzz-skill"}
        )
        assert detail.json()["latest_version"] == 1


def test_recall_with_items_matches_the_schema(callers, real_objects, in_process_app):
    response = _call(
        "/api/v1/recall",
        "POST",
        callers["agent"],
        body={"subject": "user:fuzz-admin", "scope": {"project": "crm"}, "query": "lyon"},
    )
    assert response.status_code == 200
    items = response.json()["items"]
    assert [item["id"] for item in items] == [real_objects["claim_id"]]
    assert {source["uri"] for source in items[0]["sources"]} >= {"chat://s1/m7"}


def test_throttled_and_too_large_answers_match_the_schema(
    callers, real_objects, in_process_app, settings
):
    caches = copy.deepcopy(settings.CACHES)
    caches["default"]["KEY_PREFIX"] = f"test-fuzz-{uuid.uuid4().hex}"
    settings.CACHES = caches
    settings.API_THROTTLE_RATES = {"agent": "1/minute"}
    _call("/api/v1/gate/rules", "GET", callers["agent"])
    throttled = _call("/api/v1/gate/rules", "GET", callers["agent"])
    assert throttled.status_code == 429
    headers = {name.lower(): values for name, values in throttled.headers.items()}
    assert int(headers["retry-after"][0]) >= 1
    settings.API_THROTTLE_RATES = {}
    settings.API_MAX_BODY_BYTES = 100
    body = {"subject": "user:fuzz-admin", "query": "x" * 200}
    too_large = _call("/api/v1/recall", "POST", callers["agent"], body=body)
    assert too_large.status_code == 413
    assert too_large.json()["code"] == "payload_too_large"


# -- stateful: chains of calls along the links schemathesis infers ----------------------


def test_api_holds_its_schema_along_chains_of_calls(callers, real_objects, in_process_app):
    """Create, then read and change what was created, as the agent token.

    The links come from the schema (a `Location` header, ids in a response that
    name another operation's path parameter); each step runs every check.
    """
    agent = callers["agent"]

    class AgentWorkflow(schema.as_state_machine()):
        # Each scenario starts from the same rows, or Hypothesis, replaying a
        # scenario, would find other objects and draw other steps.
        def setup(self) -> None:
            self.savepoint = transaction.savepoint()

        def teardown(self) -> None:
            transaction.savepoint_rollback(self.savepoint)

        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return agent

        def validate_response(self, response: Any, case: Any, **kwargs: Any) -> None:
            case.validate_response(response, checks=REPLAY_CHECKS)

    AgentWorkflow.run(
        settings=settings(
            max_examples=MAX_EXAMPLES,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
            database=None,
            stateful_step_count=STATEFUL_MAX_STEPS,
        )
    )
