"""Session search by meaning: ledger events get vectors after commit, discovery compares
them inside the legal set, and a vector never outlives the words it was made of.

The real packaged model embeds (loaded once per test process).
"""

from __future__ import annotations

from datetime import timedelta

import pgtrigger
import pytest
from django.urls import reverse
from django.utils import timezone

from accounts.actors import Actor
from memory.claims.embedders import embedder, embedding_digest
from memory.claims.models import Event, EventEmbedding, Subject
from memory.claims.services.events import event_record
from memory.claims.tasks import embed_events, embed_pending
from memory.privacy.services.deletion import deletion_request_create, deletion_run
from tests.memory.helpers import post_event, submit
from tests.memory.test_ledger_search import search, seed_run
from tests.memory.test_semantic_recall import embed_all

pytestmark = pytest.mark.django_db

WORKER = Actor.system("test embedding worker")
DENTIST = "Alice's dental checkup is moved to Tuesday"
# Shares no word and almost no n-gram with DENTIST.
QUESTION = "when is her teeth cleaning visit"


@pytest.fixture
def sessions(acme):
    seed_run(acme, "run-dentist", 8, {4: DENTIST})
    seed_run(acme, "run-ferry", 6, {2: "Booked the ferry to Zanzibar for Alice"})
    seed_run(acme, "run-gym", 5, {3: "Alice asked to cancel her gym membership"})


def test_a_paraphrase_finds_the_session_once_its_events_are_embedded(agent, sessions):
    before = search(agent, subject="user:alice", q=QUESTION)
    # Before the worker ran the words do not find it: nothing has a vector yet.
    assert "run-dentist" not in [run["run_id"] for run in before["results"]]

    embed_all()
    answer = search(agent, subject="user:alice", q=QUESTION)
    assert answer["semantic"] == "exact"
    best = answer["results"][0]
    assert best["run_id"] == "run-dentist" and best["signals"] == ["vector"]
    assert best["hits"] == 1 and best["snippet"].startswith("Alice's dental checkup")
    [hit] = [event for event in best["window"] if "hit" in event["roles"]]
    assert hit["text"] == DENTIST and hit["signals"] == ["vector"] and hit["position"] == 4
    # Small talk ("checked the weather") is not close enough to be a hit anywhere.
    assert all(
        "checked the weather" not in event["text"]
        for run in answer["results"]
        for event in run["window"]
        if "hit" in event["roles"]
    )
    # A lexical match still counts, and says which signals found it.
    ferry = search(agent, subject="user:alice", q="zanzibar ferry")["results"][0]
    assert ferry["run_id"] == "run-ferry"
    assert ferry["signals"][:2] == ["fulltext", "ngram"]


def test_an_event_is_embedded_by_the_task_enqueued_on_commit(
    agent, django_capture_on_commit_callbacks
):
    # Eager: the task runs where it is enqueued, so this follows write -> commit -> task.
    embed_events.app.conf.task_always_eager = True
    try:
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            event_id = post_event(agent, text=DENTIST)["id"]
            assert not EventEmbedding.objects.filter(event_id=event_id).exists()
            textless = post_event(agent, text="")["id"]
    finally:
        embed_events.app.conf.task_always_eager = False
    assert len(callbacks) >= 1
    stored = EventEmbedding.objects.get(event_id=event_id)
    assert stored.dim == 384 and len(stored.packed) == 384 * 4
    assert stored.digest == embedding_digest(DENTIST) and stored.lag_seconds >= 0
    assert stored.model == embedder().model
    # An event without text has nothing to mean; a redelivered message writes nothing.
    assert not EventEmbedding.objects.filter(event_id=textless).exists()
    assert embed_events([event_id, textless]) == 0


def test_a_scrub_replaces_the_vector_and_redaction_removes_it(agent, acme, sessions):
    embed_all()
    event = Event.objects.get(text=DENTIST)
    first = EventEmbedding.objects.get(event=event)
    # Another subject's deletion scrubs a quoted word: the vector of the old words goes
    # in the same statement, and the sweep embeds what the event says now.
    Event.objects.filter(pk=event.pk).update(
        text="Alice's [erased] is moved to Tuesday", scrubbed_at=timezone.now()
    )
    assert not EventEmbedding.objects.filter(event=event).exists()
    embed_pending()
    again = EventEmbedding.objects.get(event=event)
    assert again.digest == embedding_digest("Alice's [erased] is moved to Tuesday")
    assert again.digest != first.digest

    subject = Subject.objects.get(tenant=acme, kind="user", ref="alice")
    deletion, _ = deletion_request_create(tenant=acme, actor=WORKER, subject=subject)
    done = deletion_run(deletion_id=deletion.pk, worker=WORKER)
    assert done is not None and done.report["clean"], done.report
    assert EventEmbedding.objects.count() == 0
    assert "memory_eventembedding" in done.report["horizon"]["dead_row_versions"]["tables"]
    embed_all()  # a redacted event is never embedded again
    assert EventEmbedding.objects.count() == 0


def test_meaning_never_reaches_outside_the_legal_set(agent, acme):
    seed_run(acme, "run-look-alike", 3, {2: DENTIST}, subject="user:alice2")
    seed_run(acme, "run-early", 3, {2: "Alice's dentist appointment was confirmed"})
    cutoff = timezone.now()
    event_record(
        tenant=acme,
        actor=WORKER,
        subject_key="user:alice",
        kind="agent_step",
        text=DENTIST,
        run_id="run-after-cutoff",
        agent="scheduler",
        observed_at=timezone.now() - timedelta(hours=1),
    )
    embed_all()
    assert EventEmbedding.objects.count() == 7
    everything = search(agent, subject="user:alice", q=QUESTION)
    assert {run["run_id"] for run in everything["results"]} >= {"run-early", "run-after-cutoff"}
    # Another subject's events are never compared, however alike.
    assert "run-look-alike" not in [run["run_id"] for run in everything["results"]]
    earlier = search(agent, subject="user:alice", q=QUESTION, cutoff=cutoff.isoformat())
    assert [run["run_id"] for run in earlier["results"]] == ["run-early"]
    by_agent = search(agent, subject="user:alice", q=QUESTION, agent="scheduler")
    assert [run["run_id"] for run in by_agent["results"]] == ["run-after-cutoff"]


def test_without_an_embedder_discovery_is_lexical_and_says_so(
    agent, editor, login, sessions, settings
):
    embed_all()
    settings.MEMDESK_EMBEDDER = "none"
    answer = search(agent, subject="user:alice", q=QUESTION)
    assert answer["semantic"] == "unavailable"
    assert "run-dentist" not in [run["run_id"] for run in answer["results"]]
    page = login(editor).get(reverse("desk:ledger"), {"subject": "user:alice", "q": QUESTION})
    assert "Searched by words only" in page.content.decode()


def test_the_console_says_a_run_matched_by_meaning(editor, login, sessions):
    embed_all()
    html = (
        login(editor)
        .get(reverse("desk:ledger"), {"subject": "user:alice", "q": QUESTION})
        .content.decode()
    )
    assert "matched by meaning" in html and "run-dentist" in html
    assert "Searched by words only" not in html


def test_the_sweep_embeds_recent_events_and_the_backfill_all(acme, settings):
    seed_run(acme, "run-old", 2, {1: "An old note about the ferry"})
    seed_run(acme, "run-new", 2, {1: DENTIST})
    old = Event.objects.filter(run_id="run-old")
    with pgtrigger.ignore("memory.Event:event_only_redaction"):
        old.update(
            recorded_at=timezone.now()
            - timedelta(hours=settings.EMBED_EVENT_SWEEP_HOURS, minutes=1)
        )
    embed_pending()
    embedded = set(EventEmbedding.objects.values_list("event__run_id", flat=True))
    assert embedded == {"run-new"}
    embed_all()
    assert EventEmbedding.objects.count() == 4


def test_an_old_event_scrubbed_by_another_subjects_deletion_is_embedded_again(
    agent, acme, settings, django_capture_on_commit_callbacks
):
    word = "zyrtaquemble"
    post_event(agent, text=f"I keep the {word} in the shed")
    # Alice's memory names the word: her deletion looks for it everywhere.
    submit(agent, predicate="shed_item", value=word, text=f"Alice keeps the {word} in the shed")
    quoted = post_event(agent, subject="project:shed", text=f"Minutes: Alice's {word} stays here")
    embed_all()
    # Older than the sweep looks: only the scrub itself can have it embedded again.
    with pgtrigger.ignore("memory.Event:event_only_redaction"):
        Event.objects.filter(pk=quoted["id"]).update(
            recorded_at=timezone.now() - timedelta(hours=settings.EMBED_EVENT_SWEEP_HOURS + 1)
        )
    before = EventEmbedding.objects.get(event_id=quoted["id"])
    subject = Subject.objects.get(tenant=acme, kind="user", ref="alice")
    deletion, _ = deletion_request_create(tenant=acme, actor=WORKER, subject=subject)
    embed_events.app.conf.task_always_eager = True
    try:
        with django_capture_on_commit_callbacks(execute=True):
            done = deletion_run(deletion_id=deletion.pk, worker=WORKER)
    finally:
        embed_events.app.conf.task_always_eager = False
    assert done is not None and done.report["quotes"]["other_subjects_events_scrubbed"] == 1
    scrubbed = Event.objects.get(pk=quoted["id"])
    assert word not in scrubbed.text and scrubbed.scrubbed_at is not None
    after = EventEmbedding.objects.get(event_id=quoted["id"])
    assert after.digest == embedding_digest(scrubbed.text) != before.digest
    # Alice's own event was redacted: its vector went and never came back.
    assert EventEmbedding.objects.filter(event__subject=subject).count() == 0
