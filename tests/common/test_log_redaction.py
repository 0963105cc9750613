"""Error logs never carry request content, even when PostgreSQL quotes it back."""

from __future__ import annotations

import logging

import pytest
from django.db import IntegrityError, transaction
from django.test import RequestFactory

from accounts.models import Tenant
from common.log_redaction import RedactDatabaseErrors, RedactSecretsInPaths

CANARY = "canary-5f1e2d-request-content"


def _console_handler() -> logging.Handler:
    return next(h for h in logging.getLogger().handlers if h.get_name() == "console")


def _everything_logged(records: list[logging.LogRecord]) -> str:
    """Each record as the configured handler would write it, plus its raw fields."""
    handler = _console_handler()
    rendered = []
    for record in records:
        handler.filter(record)
        rendered.append(handler.format(record))
        rendered.append(repr(vars(record)))
    return "\n".join(rendered)


@pytest.mark.django_db(transaction=True)
@pytest.mark.urls("tests.common.probe_urls")
def test_an_integrity_error_through_the_api_logs_no_request_content(agent, caplog):
    agent.raise_request_exception = False
    with caplog.at_level(logging.DEBUG):
        response = agent.post("/api/v1/_test/duplicate-tenant", {"slug": CANARY}, format="json")
    assert response.status_code == 500
    errors = [r for r in caplog.records if r.name == "django.request"]
    assert errors, "the server error was logged"
    logged = _everything_logged(caplog.records)
    assert CANARY not in logged
    # What an operator needs is still there: what failed, and on which constraint.
    assert "IntegrityError" in logged and "sqlstate=23505" in logged
    assert "constraint=accounts_tenant_slug_key" in logged and "table=accounts_tenant" in logged
    assert "Traceback" in logged and "probe_urls.py" in logged


@pytest.mark.django_db
def test_exceptions_logged_by_our_own_code_are_redacted_at_the_handler(acme, caplog):
    logger = logging.getLogger("memdesk.anything")
    slug = f"{CANARY}-slug"
    with caplog.at_level(logging.WARNING):
        try:
            with transaction.atomic():
                Tenant.objects.create(slug=slug, name="first")
                Tenant.objects.create(slug=slug, name="second")
        except IntegrityError as exc:
            assert CANARY in str(exc)
            logger.warning("could not store %s", exc, exc_info=True)
    logged = _everything_logged(caplog.records)
    assert CANARY not in logged
    assert "could not store IntegrityError" in logged


def test_query_logs_lose_their_sql_and_parameters():
    sql = "INSERT INTO t VALUES (%s)".replace("%s", repr(CANARY))
    record = logging.LogRecord(
        "django.db.backends",
        logging.DEBUG,
        __file__,
        1,
        "(%.3f) %s; args=%s; alias=%s",
        (0.001, sql, (CANARY,), "default"),
        None,
    )
    record.sql, record.params, record.duration, record.alias = sql, (CANARY,), 0.001, "default"
    RedactDatabaseErrors().filter(record)
    assert CANARY not in record.getMessage() + repr(vars(record))
    assert record.getMessage() == "database query (0.001 s) on default: sql withheld"


def test_detail_lines_inside_a_repr_are_withheld():
    # Celery reports a failed task as "raised unexpected: <repr of the exception>".
    text = "Task x raised unexpected: " + repr(
        IntegrityError(f"duplicate key\nDETAIL:  Key (slug)=({CANARY}) already exists.")
    )
    record = logging.LogRecord("celery.app.trace", logging.ERROR, __file__, 1, text, (), None)
    RedactDatabaseErrors().filter(record)
    assert CANARY not in record.getMessage()
    assert record.getMessage().startswith("Task x raised unexpected: IntegrityError('duplicate key")


TOKEN = "ghp_JBd0Kh8oOOL8dKLzdocJ2isAjIhKtJ0RlgLK"


@pytest.mark.django_db
def test_a_token_in_a_refused_request_path_is_logged_redacted(agent, caplog):
    with caplog.at_level(logging.INFO, logger="memdesk.request"):
        response = agent.get(f"/api/v1/claims/{TOKEN}/history")
    assert response.status_code == 404
    (record,) = [r for r in caplog.records if r.name == "memdesk.request"]
    assert record.path == "/api/v1/claims/[redacted]/history"
    assert TOKEN not in _everything_logged(caplog.records)


@pytest.mark.django_db
def test_a_path_without_a_credential_is_logged_as_it_is(agent, caplog):
    path = "/api/v1/claims/550e8400-e29b-41d4-a716-446655440000"
    with caplog.at_level(logging.INFO, logger="memdesk.request"):
        agent.get(path)
    (record,) = [r for r in caplog.records if r.name == "memdesk.request"]
    assert record.path == path


def test_django_error_lines_about_a_request_lose_the_token_in_its_path():
    request = RequestFactory().get(f"/api/v1/claims/{TOKEN}")
    record = logging.LogRecord(
        "django.request",
        logging.ERROR,
        __file__,
        1,
        "Internal Server Error: %s",
        (request.path,),
        None,
    )
    record.request = request
    RedactSecretsInPaths().filter(record)
    assert record.getMessage() == "Internal Server Error: /api/v1/claims/[redacted]"
    assert TOKEN not in repr(vars(record))
