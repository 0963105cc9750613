"""Durable recall traces (`RECALL_TRACE_WRITE=outbox`, the default): the recall stores its
trace as a pending row; a lost message only delays the trace, and a deletion finds it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from celery import current_app
from django.utils import timezone

from accounts.actors import Actor
from memory.claims.models import Claim, PendingTrace, RecallTrace, Subject
from memory.claims.services.recall_outbox import SWEEP_AFTER, pending_traces_drain
from memory.claims.tasks import recall_traces_sweep, record_recall
from memory.claims.trace_tokens import context_tokens
from memory.privacy.models import DeletionStatus
from memory.privacy.services.deletion import deletion_request_create, deletion_run
from tests.memory.helpers import recall, submit

pytestmark = pytest.mark.django_db
WORKER = Actor.system("test lifecycle worker")


@pytest.fixture
def eager_celery():
    assert record_recall.name in current_app.tasks
    current_app.conf.task_always_eager = True
    yield
    current_app.conf.task_always_eager = False


def test_outbox_is_the_default_and_beat_sweeps_pending_traces():
    from config import settings as configured  # the module, not the tests' overrides

    assert configured.RECALL_TRACE_WRITE == "outbox"
    sweep = configured.CELERY_BEAT_SCHEDULE["recall-traces"]
    assert sweep["task"] == recall_traces_sweep.name


def test_a_lost_message_only_delays_the_trace(agent, settings, django_capture_on_commit_callbacks):
    settings.RECALL_TRACE_WRITE = "outbox"
    claim = submit(agent)
    # The callbacks never run: the message that would name the trace is lost.
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        answer = recall(agent, query="Shanghai", budget_chars=500)
    assert callbacks
    assert not RecallTrace.objects.filter(pk=answer["trace_id"]).exists()
    pending = PendingTrace.objects.get(pk=answer["trace_id"])
    assert pending.trace["query"] == "Shanghai" and pending.trace["chosen"] == [claim["id"]]
    assert Claim.objects.get(pk=claim["id"]).use_count == 0

    # Beat's sweep writes it once it is older than its message could take.
    assert recall_traces_sweep() == 0
    PendingTrace.objects.update(created_at=timezone.now() - SWEEP_AFTER)
    assert recall_traces_sweep() == 1
    trace = RecallTrace.objects.get(pk=answer["trace_id"])
    assert trace.query == "Shanghai" and [str(c) for c in trace.chosen] == [claim["id"]]
    assert trace.ranking["items"][claim["id"]]["signals"] == answer["items"][0]["why"]["signals"]
    assert Claim.objects.get(pk=claim["id"]).use_count == 1
    assert not PendingTrace.objects.exists()
    # The context the agent got, and its size in the embedder's tokens.
    shown = agent.get(f"/api/v1/recall/traces/{answer['trace_id']}").json()
    assert shown["rendered_context"] == "Alice lives in Shanghai" == answer["items"][0]["text"]
    assert shown["context_tokens"] == context_tokens("Alice lives in Shanghai") == 4
    # Swept again, or the lost message delivered late: nothing is written twice.
    assert recall_traces_sweep() == 0
    assert record_recall(trace={"id": answer["trace_id"], "pending": True}) is False
    assert Claim.objects.get(pk=claim["id"]).use_count == 1


def test_the_sweep_leaves_traces_whose_message_may_still_come(
    agent, settings, django_capture_on_commit_callbacks
):
    settings.RECALL_TRACE_WRITE = "outbox"
    submit(agent)
    with django_capture_on_commit_callbacks(execute=False):
        answer = recall(agent, query="Shanghai")
    assert pending_traces_drain(older_than=timedelta(minutes=5)) == 0
    assert PendingTrace.objects.filter(pk=answer["trace_id"]).exists()


def test_the_message_names_the_pending_row_and_the_worker_writes_it(
    agent, settings, eager_celery, django_capture_on_commit_callbacks
):
    settings.RECALL_TRACE_WRITE = "outbox"
    claim = submit(agent)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        answer = recall(agent, query="Shanghai")
    for callback in callbacks:
        callback()  # the commit: the message (the trace's id only) goes; the task runs
    trace = RecallTrace.objects.get(pk=answer["trace_id"])
    assert [str(c) for c in trace.chosen] == [claim["id"]]
    assert not PendingTrace.objects.exists()
    assert Claim.objects.get(pk=claim["id"]).use_count == 1


def test_a_deletion_finds_and_redacts_a_pending_trace(
    agent, acme, settings, django_capture_on_commit_callbacks
):
    settings.RECALL_TRACE_WRITE = "outbox"
    claim = submit(agent, text="Alice keeps her bike at Zanquorth station", value="Zanquorth")
    with django_capture_on_commit_callbacks(execute=False):
        answer = recall(agent, query="where is Zanquorth")
    assert PendingTrace.objects.filter(pk=answer["trace_id"]).exists()

    subject = Subject.objects.get(tenant=acme, kind="user", ref="alice")
    deletion, _ = deletion_request_create(
        tenant=acme, actor=WORKER, subject=subject, claim=Claim.objects.get(pk=claim["id"])
    )
    done = deletion_run(deletion_id=deletion.pk, worker=WORKER)

    assert done is not None and done.status == DeletionStatus.COMPLETED, done and done.report
    assert not PendingTrace.objects.exists()
    trace = RecallTrace.objects.get(pk=answer["trace_id"])
    assert trace.query == "" and trace.redacted_at is not None
    assert "Zanquorth" not in str(trace.filters) + str(trace.ranking)
    assert "context" not in trace.ranking
