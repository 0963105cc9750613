"""Recovery's log and the verdicts on its answers: recovery correctness, one of the eight
reliability figures, through the API, the console, /metrics and the dashboard."""

from __future__ import annotations

import re

import pytest
from django.db import ProgrammingError, connection, transaction
from prometheus_client.parser import text_string_to_metric_families

from accounts.models import AuditEvent
from memory.claims.reliability import agent_reliability
from memory.receipts.models import RecoveryAnswerRecord, RecoveryVerdict

pytestmark = pytest.mark.django_db


def ask(client, task_key: str, fingerprint: str = "sha256:x", **extra) -> dict:
    response = client.post(
        "/api/v1/recovery",
        {"task_key": task_key, "input_fingerprint": fingerprint, **extra},
        format="json",
    )
    assert response.status_code == 200, response.json()
    return response.json()


def judge(client, answer_id: int, expected: str, **body) -> object:
    return client.post(
        f"/api/v1/recovery/answers/{answer_id}/verdict",
        {"expected": expected, **body},
        format="json",
    )


def test_every_answer_is_logged_and_listed_with_its_verdict(agent):
    first = ask(agent, "nightly-report")
    second = ask(agent, "nightly-report", run_id="run-2")
    assert first["decision"] == "fresh" and first["answer_id"] != second["answer_id"]
    logged = RecoveryAnswerRecord.objects.get(pk=first["answer_id"])
    assert (logged.task_key, logged.decision, logged.reason) == (
        "nightly-report",
        "fresh",
        "no_checkpoint",
    )
    assert logged.run_id == "" and logged.token_id is not None

    listed = agent.get("/api/v1/recovery/answers").json()["results"]
    assert [row["id"] for row in listed] == [second["answer_id"], first["answer_id"]]
    assert listed[0]["run_id"] == "run-2" and listed[0]["verdict"] is None
    assert listed[0]["correct"] is None

    # The agent replays the run and knows `fresh` was right.
    confirmed = judge(agent, first["answer_id"], "fresh")
    assert confirmed.status_code == 200, confirmed.json()
    assert confirmed.json()["correct"] is True
    assert confirmed.json()["verdict"]["source"] == "replay"
    unjudged = agent.get("/api/v1/recovery/answers?verdict=unjudged").json()["results"]
    assert [row["id"] for row in unjudged] == [second["answer_id"]]


def test_bad_verdicts_change_nothing_and_foreign_answers_are_not_found(
    agent, globex_agent, make_agent, acme
):
    answer = ask(agent, "sync-crm")["answer_id"]
    unknown = judge(agent, answer, "retry_harder")
    assert unknown.status_code == 400 and unknown.json()["code"] == "validation_error"
    other_token = make_agent(acme, name="other", capabilities=["receipts:write"])
    for client in (globex_agent, other_token):
        response = judge(client, answer, "fresh")
        assert response.status_code == 404 and response.json()["code"] == "not_found"
        assert client.get("/api/v1/recovery/answers").json()["results"] == []
    assert judge(agent, 10**9, "fresh").status_code == 404
    bad_filter = agent.get("/api/v1/recovery/answers?verdict=maybe")
    assert bad_filter.status_code == 400
    assert not RecoveryVerdict.objects.exists()


def test_a_person_overturning_an_answer_says_why_and_is_audited(agent, session_api, editor, alice):
    answer = ask(agent, "publish-digest")["answer_id"]
    person = session_api(editor)
    silent = judge(person, answer, "escalate")
    assert silent.status_code == 400 and silent.json()["code"] == "note_required"
    assert not RecoveryVerdict.objects.exists()

    overturned = judge(person, answer, "escalate", note="the blog already had the post")
    assert overturned.status_code == 200, overturned.json()
    body = overturned.json()
    assert body["correct"] is False
    assert body["verdict"] == {
        "expected": "escalate",
        "source": "person",
        "by": editor.username,
        "note": "the blog already had the post",
    }
    audit = AuditEvent.objects.get(verb="recovery.overturned")
    assert audit.target_id == str(answer) and audit.data["expected"] == "escalate"
    # End users do not judge recovery.
    assert judge(session_api(alice), answer, "fresh").status_code == 403


def test_the_log_is_append_only(agent):
    answer = ask(agent, "t")["answer_id"]
    for statement in (
        "UPDATE memory_recoveryanswerrecord SET decision = 'no_op' WHERE id = %s",
        "DELETE FROM memory_recoveryanswerrecord WHERE id = %s",
    ):
        with pytest.raises(ProgrammingError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement, [answer])
    assert RecoveryAnswerRecord.objects.get(pk=answer).decision == "fresh"


def _scraped(client) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    samples = {}
    for family in text_string_to_metric_families(client.get("/metrics").content.decode()):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def test_correctness_is_the_share_of_judged_answers_the_latest_verdict_agrees_with(
    acme, globex, agent, globex_agent, session_api, editor, login, client
):
    answers = [ask(agent, f"task-{n}")["answer_id"] for n in range(4)]
    judge(agent, answers[0], "fresh")
    judge(agent, answers[1], "fresh")
    judge(agent, answers[2], "resume")  # the replay expected a resume
    # A person overturns the replay's verdict on the third: fresh was right after all.
    judge(session_api(editor), answers[2], "fresh", note="the input changed")
    judge(agent, answers[1], "verify_only")  # and the latest verdict is what counts
    # Another tenant's verdicts never count here.
    judge(globex_agent, ask(globex_agent, "g")["answer_id"], "escalate")

    figures = agent_reliability(tenant=acme)[acme.pk]
    assert (figures.recovery_judged, figures.recovery_correct) == (3, 2)
    assert figures.recovery_correctness == pytest.approx(2 / 3)
    assert agent_reliability(tenant=globex)[globex.pk].recovery_correctness == 0.0

    scraped = _scraped(client)
    assert scraped[("memdesk_agent_recovery_correctness", (("tenant", "acme"),))] == (
        pytest.approx(2 / 3)
    )
    assert scraped[("memdesk_agent_recovery_answers_judged", (("tenant", "acme"),))] == 3
    assert (
        scraped[
            (
                "memdesk_recovery_decisions_total",
                (("decision", "fresh"), ("reason", "no_checkpoint")),
            )
        ]
        == 5
    )
    html = login(editor).get("/dashboard/").content.decode()
    shown = dict(re.findall(r'data-metric="(\w+)">([^<]*)<', html))
    assert float(shown["recovery_correctness"]) == pytest.approx(2 / 3, abs=1e-4)
    assert "2 of 3 judged answers" in html


def test_editors_judge_answers_on_the_console_page(agent, editor, alice, login):
    answer = ask(agent, "weekly-export")["answer_id"]
    desk = login(editor)
    page = desk.get("/recovery/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "weekly-export" in html and "not judged" in html
    token = desk.cookies["csrftoken"].value
    refused = desk.post(
        f"/recovery/{answer}/verdict",
        {"expected": "no_op", "query": "decision=fresh"},
        HTTP_X_CSRFTOKEN=token,
    )
    assert refused.status_code == 302 and refused["Location"] == "/recovery/?decision=fresh"
    assert not RecoveryVerdict.objects.exists()
    assert "overturning a recovery answer needs a note" in desk.get("/recovery/").content.decode()

    confirmed = desk.post(
        f"/recovery/{answer}/verdict", {"expected": "fresh"}, HTTP_X_CSRFTOKEN=token
    )
    assert confirmed.status_code == 302
    verdict = RecoveryVerdict.objects.get()
    assert (verdict.expected, verdict.source, verdict.actor_label) == (
        "fresh",
        "person",
        editor.username,
    )
    listed = desk.get("/recovery/?verdict=confirmed").content.decode()
    assert "weekly-export" in listed and "right" in listed
    assert "weekly-export" not in desk.get("/recovery/?verdict=unjudged").content.decode()
    assert login(alice).get("/recovery/").status_code == 403
