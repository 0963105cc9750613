"""The recall trace and use counts, written off the answer's path, and recall's query count."""

from __future__ import annotations

import base64
import json
import time
import uuid
from collections.abc import Callable

import pytest
import redis
from celery import current_app
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.actors import Actor
from memory.claims.models import Claim, RecallTrace, Subject
from memory.claims.selectors.claims import claims_recall
from memory.claims.selectors.recall_ranking import RecallQuery
from memory.claims.services.recall import recall_run
from memory.claims.tasks import record_recall
from memory.privacy.services.deletion import deletion_request_create
from tests.memory.helpers import recall, submit


@pytest.fixture
def eager_celery():
    # The task runs where the recall's commit enqueues it (by name: it is registered).
    assert record_recall.name in current_app.tasks
    current_app.conf.task_always_eager = True
    yield
    current_app.conf.task_always_eager = False


def use_counts(*claim_ids: str) -> list[int]:
    return [Claim.objects.get(pk=claim_id).use_count for claim_id in claim_ids]


def wait_for(condition: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"condition not met within {timeout} s")
        time.sleep(0.05)


@pytest.mark.django_db
def test_the_answer_carries_the_trace_id_and_the_worker_writes_it_after_commit(
    agent, settings, eager_celery, django_capture_on_commit_callbacks
):
    settings.RECALL_TRACE_WRITE = "worker"
    claim = submit(agent)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        answer = recall(agent, query="Shanghai", budget_chars=500)
    # The answer is complete before anything is written.
    assert [i["id"] for i in answer["items"]] == [claim["id"]]
    assert not RecallTrace.objects.filter(pk=answer["trace_id"]).exists()
    assert use_counts(claim["id"]) == [0]

    assert callbacks
    for callback in callbacks:
        callback()  # the commit: the task is enqueued and (eagerly) runs
    trace = RecallTrace.objects.get(pk=answer["trace_id"])
    assert [str(c) for c in trace.chosen] == [claim["id"]]
    assert trace.query == "Shanghai" and trace.filters["limit"] == 10
    assert trace.used_chars == len("Alice lives in Shanghai") and trace.budget_chars == 500
    assert trace.excluded == answer["excluded"]
    assert trace.ranking["items"][claim["id"]]["signals"] == answer["items"][0]["why"]["signals"]
    assert trace.token_id == agent.token.pk and trace.redacted_at is None
    touched = Claim.objects.get(pk=claim["id"])
    assert touched.use_count == 1 and touched.last_used_at == trace.created_at


@pytest.mark.django_db
def test_a_redelivered_message_writes_the_trace_once_and_counts_the_use_once(
    agent, settings, eager_celery, django_capture_on_commit_callbacks
):
    settings.RECALL_TRACE_WRITE = "worker"
    claim = submit(agent)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        answer = recall(agent, query="Shanghai")
    for _delivery in range(2):
        for callback in callbacks:
            callback()
    assert RecallTrace.objects.filter(pk=answer["trace_id"]).count() == 1
    assert use_counts(claim["id"]) == [1]


@pytest.mark.django_db
def test_a_trace_written_after_an_erasure_began_is_written_redacted(
    acme, agent, alice, settings, eager_celery, django_capture_on_commit_callbacks
):
    settings.RECALL_TRACE_WRITE = "worker"
    claim = submit(agent)
    with django_capture_on_commit_callbacks(execute=False) as recalled:
        answer = recall(agent, query="where does Alice live")
    # Alice asks to be forgotten before the worker got to the trace: the erasure's
    # plan may already have looked for her traces and not found this one.
    deletion_request_create(
        tenant=acme,
        actor=Actor.system("test"),
        subject=Subject.objects.get(tenant=acme, kind="user", ref="alice"),
    )
    for callback in recalled:
        callback()
    trace = RecallTrace.objects.get(pk=answer["trace_id"])
    assert (trace.query, trace.filters) == ("", {})
    assert trace.redacted_at is not None
    assert [str(c) for c in trace.chosen] == [claim["id"]]


def test_the_trace_is_written_by_a_real_worker(celery_workers, agent, settings):
    settings.RECALL_TRACE_WRITE = "worker"
    settings.RECALL_TRACE_QUEUE = celery_workers.queue
    celery_workers.env["RECALL_TRACE_QUEUE"] = celery_workers.queue
    worker = celery_workers.start()
    claim = submit(agent)
    worker.wait_ready()
    answer = recall(agent, query="Shanghai")
    assert [i["id"] for i in answer["items"]] == [claim["id"]]
    wait_for(lambda: RecallTrace.objects.filter(pk=answer["trace_id"]).exists(), timeout=30)
    trace = RecallTrace.objects.get(pk=answer["trace_id"])
    assert [str(c) for c in trace.chosen] == [claim["id"]] and trace.query == "Shanghai"
    assert use_counts(claim["id"]) == [1]


@pytest.mark.django_db
def test_recall_runs_the_same_few_queries_however_many_claims_the_subject_has(
    acme, agent, settings
):
    settings.MEMDESK_EMBEDDER = "none"
    subject_claims = [submit(agent, predicate="p0", value="0", text="Alice fact 0")]
    subject = Subject.objects.get(tenant=acme, kind="user", ref="alice")

    def selector_queries(**query) -> int:
        with CaptureQueriesContext(connection) as captured:
            claims_recall(tenant=acme, q=RecallQuery(subject=subject, **query))
        return len(captured.captured_queries)

    def http_queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            answer = recall(agent, query="Alice fact", limit=100)
        assert len(answer["items"]) == len(subject_claims)
        return len(captured.captured_queries)

    few = http_queries()
    for n in range(1, 30):
        subject_claims.append(
            submit(agent, predicate=f"p{n}", value=str(n), text=f"Alice fact {n}")
        )
    assert http_queries() == few
    # The selector: one statement for the legal set, the signals, their ranks and the
    # exclusion counts, one for the claims returned and their sources.
    assert selector_queries(query="Alice fact", limit=100) == 2
    assert selector_queries(query="Alice fact", kinds=["preference"]) == 1  # nothing legal
    # Around it: the token and the subject; inline, the trace and the use in one statement,
    # which the worker writes instead.
    assert few == 5
    settings.RECALL_TRACE_WRITE = "worker"
    assert http_queries() == 4


@pytest.mark.django_db
def test_in_a_request_the_trace_message_goes_out_after_the_response(
    acme, agent, settings, eager_celery, django_capture_on_commit_callbacks
):
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    settings.RECALL_TRACE_WRITE = "worker"
    claim = submit(agent)
    subject = Subject.objects.get(tenant=acme, kind="user", ref="alice")
    # As a server runs a request (the test keeps its transaction: no connection closing).
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        request_started.send(sender=None)
        with django_capture_on_commit_callbacks(execute=True):
            _, trace_id = recall_run(
                tenant=acme,
                actor=Actor.system("test"),
                subject_key="user:alice",
                q=RecallQuery(subject=subject, query="Shanghai"),
            )
        # Committed, but the answer has not been sent: nothing went to the broker yet.
        assert not RecallTrace.objects.filter(pk=trace_id).exists()
        request_finished.send(sender=None)  # the server closed the sent response
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
    trace = RecallTrace.objects.get(pk=trace_id)
    assert [str(c) for c in trace.chosen] == [claim["id"]]
    # Outside a request (a task, a command) the message goes at commit, as before.
    with django_capture_on_commit_callbacks(execute=True):
        _, trace_id = recall_run(
            tenant=acme,
            actor=Actor.system("test"),
            subject_key="user:alice",
            q=RecallQuery(subject=subject, query="Shanghai"),
        )
    assert RecallTrace.objects.filter(pk=trace_id).exists()


@pytest.mark.django_db
def test_the_trace_message_names_the_trace_in_its_headers_without_repeating_it(
    acme, agent, settings, django_capture_on_commit_callbacks
):
    queue = f"test-trace-headers-{uuid.uuid4().hex}"
    settings.RECALL_TRACE_WRITE = "worker"
    settings.RECALL_TRACE_QUEUE = queue
    submit(agent)
    subject = Subject.objects.get(tenant=acme, kind="user", ref="alice")
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            _, trace_id = recall_run(
                tenant=acme,
                actor=Actor.system("test"),
                subject_key="user:alice",
                q=RecallQuery(subject=subject, query="where does Shanghai-Alice live"),
            )
        raw = broker.lpop(queue)
    finally:
        broker.delete(queue)
    assert raw is not None, "the trace message was not published"
    message = json.loads(raw)
    headers = json.dumps(message["headers"])
    assert "Shanghai-Alice" not in headers and str(trace_id) in headers
    # The body still carries the whole trace for the worker.
    body = json.loads(base64.b64decode(message["body"]))
    assert body[1]["trace"]["query"] == "where does Shanghai-Alice live"
