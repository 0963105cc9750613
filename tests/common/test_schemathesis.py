"""Schemathesis over the whole OpenAPI schema, against the real database and Redis.

Every operation runs the coverage phase (boundary and invalid values derived
from the schema) and a short fuzzing phase, once as an agent token with every
capability and once as an admin's console session (who is also an end user
with a subject, so `/me/` answers). The checks: no server error, responses
match the schema for their documented status, and the content type is the
documented one. Examples stay few so the file runs in about a minute on two cores.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.middleware.csrf import _get_new_csrf_string
from django.test import Client
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
)

from accounts.models import Role
from accounts.services import agent_token_create, member_create, subject_link, tenant_create
from config.wsgi import application

CONFIG = schemathesis.Config.from_dict(
    {
        "phases": {
            "examples": {"enabled": False},
            "coverage": {"enabled": True},
            "fuzzing": {"enabled": True},
            "stateful": {"enabled": False},
        },
        "generation": {"max-examples": 6, "database": "none", "deterministic": True},
    }
)
CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance]


# Loaded at collection: the schema endpoint needs neither the database nor a caller.
schema = schemathesis.openapi.from_wsgi("/api/schema/", application, config=CONFIG)


@pytest.fixture(autouse=True)
def _fuzzing_settings(db, settings) -> Iterator[None]:
    # The fuzzer sends far more requests than a client would in a minute.
    settings.API_THROTTLE_RATES = {}
    # Unknown paths and errors must be problems in the mode developers run, too.
    settings.DEBUG = True
    # The app is called in-process inside the test's transaction; like Django's
    # test client, keep the request signals from closing that connection.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def callers() -> dict[str, dict[str, Any]]:
    tenant = tenant_create(slug="fuzz", name="Fuzz")[0]
    token = agent_token_create(tenant=tenant, name="fuzzer", max_authority="user_explicit")
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


@schema.parametrize()
@settings(
    deadline=None,
    suppress_health_check=list(HealthCheck),
    max_examples=6,
    derandomize=True,
    database=None,
)
def test_api_answers_every_request_within_its_schema(case: Any, callers) -> None:
    for credentials in callers.values():
        case.call_and_validate(checks=CHECKS, **credentials)
