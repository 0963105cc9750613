"""Shared fixtures: two tenants (acme and globex), people in each, agent tokens, API clients."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import Client, TransactionTestCase
from rest_framework.test import APIClient

from accounts.models import AgentToken, Role, Tenant
from accounts.services import agent_token_create, member_create, subject_link, tenant_create
from tests import snapshot

# A test database need not survive a crash of the machine, so its commits do not wait for
# the disk (PostgreSQL's synchronous_commit=off: a committed row is visible to every other
# connection at once, as before; only its flush to disk comes a moment later). libpq reads
# PGOPTIONS at every connection: this process's, and those of the servers, Celery workers
# and commands the tests start, which inherit the environment.
if "synchronous_commit" not in os.environ.get("PGOPTIONS", ""):
    os.environ["PGOPTIONS"] = f"{os.environ.get('PGOPTIONS', '')} -c synchronous_commit=off".strip()

# Parallel workers (`pytest -n`) share one Redis. Each gets a key prefix of its own, as it
# gets a test database of its own, so one worker's counters, throttles and cached blocks
# never meet another's (tenant ids repeat across the workers' databases). The environment
# carries it to the Celery worker processes the tests start.
if _xdist_worker := os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ["CACHE_KEY_PREFIX"] = f"memdesk-test-{_xdist_worker}"
    django_settings.CACHES["default"]["KEY_PREFIX"] = os.environ["CACHE_KEY_PREFIX"]


# A private method of Django's, which django-stubs does not declare.
_flush = TransactionTestCase._fixture_teardown  # type: ignore[attr-defined]


def _empty_tables_after_the_test(self: TransactionTestCase) -> None:
    # What a transactional test (live servers, browsers, workers) leaves is emptied with
    # DELETEs rather than `flush`'s TRUNCATE of every table: about 0.2 s less per test,
    # over a few hundred tests. A test that flushes only some apps, or restores a
    # serialized database, keeps Django's own teardown.
    if self.available_apps is not None or self.serialized_rollback:
        _flush(self)
        return
    snapshot.empty_tables()


TransactionTestCase._fixture_teardown = _empty_tables_after_the_test  # type: ignore[attr-defined]


def _longest_first(item: pytest.Item) -> int:
    if item.get_closest_marker("slow"):
        return 0
    if item.get_closest_marker("browser") or item.get_closest_marker("worker"):
        return 1
    return 2


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # The tests that take tens of seconds (soaks, browser journeys, real workers) start
    # first, the many short ones after: the xdist workers then end together, instead of
    # one finishing a long test alone while the other waits. The sort is stable, so every
    # worker collects the same order, as xdist requires.
    items.sort(key=_longest_first)


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings) -> None:
    # PBKDF2 is slow on purpose to protect stored passwords; test users need no protection.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _recall_traces_inline(settings) -> None:
    # Tests read a recall's trace and use counts right after the call, inside the test's
    # transaction, where nothing enqueued on commit ever runs; the worker path has its
    # own tests (tests/memory/test_recall_trace.py).
    settings.RECALL_TRACE_WRITE = "inline"


@pytest.fixture
def acme(db) -> Tenant:
    return tenant_create(slug="acme", name="Acme")[0]


@pytest.fixture
def globex(db) -> Tenant:
    return tenant_create(slug="globex", name="Globex")[0]


@pytest.fixture
def make_member(db) -> Callable[..., Any]:
    def make(tenant: Tenant, username: str, role: str = Role.EDITOR) -> Any:
        return member_create(
            tenant=tenant, username=username, password="correct horse battery", role=role
        ).user

    return make


@pytest.fixture
def editor(acme, make_member):
    return make_member(acme, "erin", Role.EDITOR)


@pytest.fixture
def editor2(acme, make_member):
    return make_member(acme, "eddie", Role.EDITOR)


@pytest.fixture
def admin_user(acme, make_member):
    return make_member(acme, "ada", Role.ADMIN)


@pytest.fixture
def admin2(acme, make_member):
    return make_member(acme, "abe", Role.ADMIN)


@pytest.fixture
def alice(acme, make_member):
    user = make_member(acme, "alice", Role.USER)
    subject_link(tenant=acme, user=user, subject_key="user:alice")
    return user


@pytest.fixture
def bob(acme, make_member):
    user = make_member(acme, "bob", Role.USER)
    subject_link(tenant=acme, user=user, subject_key="user:bob")
    return user


class AgentClient(APIClient):
    """An API client that remembers the agent token it authenticates with."""

    token: AgentToken
    secret: str


@pytest.fixture
def outsider(db) -> Any:
    """A person who can sign in but is a member of no tenant."""
    return get_user_model().objects.create_user(username="olga", password="correct horse battery")


@pytest.fixture
def make_agent(db) -> Callable[..., AgentClient]:
    """An API client authenticated as a fresh agent token of `tenant`, acting for `owner`
    (a staff member of the tenant) or, when none is named, for nobody."""

    def make(
        tenant: Tenant,
        *,
        name: str | None = None,
        capabilities: list[str] | None = None,
        subjects: Sequence[str] = (),
        max_authority: str = "agent_inferred",
        owner: Any = None,
    ) -> AgentClient:
        issued = agent_token_create(
            tenant=tenant,
            name=name
            or f"agent-{tenant.slug}-{len(capabilities or [])}-{id(subjects)}-{max_authority}",
            capabilities=capabilities,
            allowed_subjects=subjects,
            max_authority=max_authority,
            owner=owner,
        )
        client = AgentClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.secret}")
        client.token = issued.token
        client.secret = issued.secret
        return client

    return make


@pytest.fixture
def agent(acme, make_agent) -> AgentClient:
    """A front-end agent that talks to the user: an admin gave it the `user_explicit` ceiling,
    so what it records from the user channel may become the user's word. Tests of the trust
    model itself make their own tokens with `make_agent(..., max_authority=...)`."""
    return make_agent(acme, name="acme-agent", max_authority="user_explicit")


@pytest.fixture
def globex_agent(globex, make_agent) -> AgentClient:
    return make_agent(globex, name="globex-agent", max_authority="user_explicit")


@pytest.fixture
def login() -> Callable[[Any], Client]:
    """A console client signed in as `user`, with CSRF checks on like a browser."""

    def make(user: Any) -> Client:
        client = Client(enforce_csrf_checks=True)
        client.force_login(user)
        return client

    return make


@pytest.fixture
def session_api() -> Callable[[Any], APIClient]:
    """An API client using a person's session (what the console's fetches do)."""

    def make(user: Any) -> APIClient:
        client = APIClient()
        client.force_login(user)
        return client

    return make
