"""Retention: claims past their tenant's period are forgotten through the deletion pipeline."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pgtrigger
import pytest
from django.core.management import call_command
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import AuditEvent, Role
from common.problems import Problem
from memory.claims.models import Claim, ClaimStatus, Event, RecallTrace
from memory.privacy.models import DeletionRequest, RetentionPolicy
from memory.privacy.models.lifecycle import DeletionStatus
from memory.privacy.services.deletion import deletion_run
from memory.privacy.services.retention import retention_policy_set
from memory.privacy.tasks import retention_sweep_task
from tests.dump import tables_containing
from tests.memory.helpers import post_event, recall, submit

pytestmark = pytest.mark.django_db

WORKER = Actor.system("test lifecycle worker")
ADMIN = Actor.system("test admin")
CANARY = "quokkaretention5512"


def aged(claim: dict, days: int) -> None:
    """The claim as if it had been recorded `days` ago."""
    Claim.objects.filter(pk=claim["id"]).update(recorded_at=timezone.now() - timedelta(days=days))


def test_claims_past_their_period_are_deleted_by_the_beat_task_with_a_report(agent, acme):
    retention_policy_set(tenant=acme, actor=ADMIN, kind="fact", sensitivity="", days=30)
    old = submit(agent, predicate="locker", value=CANARY, text=f"Alice's locker is {CANARY}")
    fresh = submit(agent, predicate="drink", value="tea", text="Alice drinks tea")
    aged(old, 40)
    aged(fresh, 10)

    asked = retention_sweep_task()

    assert asked == 1
    deletion = DeletionRequest.objects.get()
    assert (str(deletion.claim_id), deletion.status) == (old["id"], DeletionStatus.PENDING)
    sweep = AuditEvent.objects.get(verb="retention.swept")
    assert sweep.data["deletions"] == [str(deletion.pk)]
    done = deletion_run(deletion_id=deletion.pk, worker=WORKER)
    assert done is not None and done.status == DeletionStatus.COMPLETED
    assert done.report["clean"], done.report["probes"]
    assert done.report["artifacts"]["claims"] == {"erased": 1}
    assert Claim.objects.get(pk=old["id"]).status == ClaimStatus.ERASED
    assert Claim.objects.get(pk=fresh["id"]).status == ClaimStatus.ACTIVE
    assert tables_containing(CANARY) == {}
    # Nothing is left past the period: the next sweep asks for nothing.
    assert retention_sweep_task() == 0


def test_a_period_per_sensitivity_class_reaches_only_that_class(agent, acme, alice, session_api):
    session_api(alice).put("/api/v1/me/consents", {"consents": {"health": True}}, format="json")
    retention_policy_set(tenant=acme, actor=ADMIN, kind="", sensitivity="health", days=7)
    health = submit(agent, predicate="condition", value="asthma", text="Alice has asthma")
    plain = submit(agent, predicate="drink", value="tea", text="Alice drinks tea")
    aged(health, 8)
    aged(plain, 8)

    assert retention_sweep_task() == 1
    assert DeletionRequest.objects.get().claim_id == Claim.objects.get(pk=health["id"]).pk


def test_the_command_sweeps_and_runs_the_deletions(agent, acme, globex):
    retention_policy_set(tenant=acme, actor=ADMIN, kind="", sensitivity="", days=1)
    old = submit(agent, predicate="locker", value="blue", text="Alice's locker is blue")
    aged(old, 2)
    out = StringIO()

    call_command("retention_sweep", "--tenant", "acme", stdout=out)

    (line,) = out.getvalue().splitlines()
    summary = json.loads(line)
    assert summary["tenant"] == "acme"
    assert [(d["status"], d["clean"]) for d in summary["deletions"]] == [("completed", True)]
    assert Claim.objects.get(pk=old["id"]).status == ClaimStatus.ERASED


def test_admins_set_and_remove_periods_on_the_settings_page(acme, admin_user, login):
    client = login(admin_user)
    page = client.get("/settings/retention/")
    assert page.status_code == 200
    assert "No retention periods" in page.content.decode()
    token = client.cookies["csrftoken"].value

    saved = client.post(
        "/settings/retention/",
        {"kind": "preference", "sensitivity": "location", "days": "90"},
        HTTP_X_CSRFTOKEN=token,
    )

    assert saved.status_code == 302
    policy = RetentionPolicy.objects.get(tenant=acme)
    assert (policy.kind, policy.sensitivity, policy.days) == ("preference", "location", 90)
    listed = client.get("/settings/retention/").content.decode()
    assert f'id="policy-{policy.pk}"' in listed and "90 days" in listed
    bad = client.post(
        "/settings/retention/", {"kind": "", "sensitivity": "", "days": "0"}, HTTP_X_CSRFTOKEN=token
    )
    assert bad.status_code == 400
    assert "A whole number of days" in bad.content.decode()
    assert RetentionPolicy.objects.count() == 1
    removed = client.post(f"/settings/retention/{policy.pk}/remove", HTTP_X_CSRFTOKEN=token)
    assert removed.status_code == 302
    assert not RetentionPolicy.objects.exists()
    assert [
        a.verb for a in AuditEvent.objects.filter(target_type="retention_policy").order_by("id")
    ] == [
        "retention.set",
        "retention.removed",
    ]


def test_another_tenants_settings_are_404_and_editors_are_refused(
    acme, globex, admin_user, editor, make_member, login
):
    policy = retention_policy_set(tenant=acme, actor=ADMIN, kind="", sensitivity="", days=30)
    other_admin = make_member(globex, "gina", Role.ADMIN)
    client = login(other_admin)
    client.get("/settings/retention/")
    token = client.cookies["csrftoken"].value

    assert "30 days" not in client.get("/settings/retention/").content.decode()
    gone = client.post(f"/settings/retention/{policy.pk}/remove", HTTP_X_CSRFTOKEN=token)
    assert gone.status_code == 404
    assert RetentionPolicy.objects.filter(pk=policy.pk).exists()
    assert login(editor).get("/settings/retention/").status_code == 403


def test_the_dashboard_shows_retention(acme, editor, login):
    retention_policy_set(tenant=acme, actor=ADMIN, kind="fact", sensitivity="health", days=14)

    page = login(editor).get("/dashboard/").content.decode()

    assert 'id="retention"' in page
    assert "fact · Health: 14 days (0 past it now)" in page


def test_the_dashboard_shows_event_and_trace_periods(acme, editor, login):
    retention_policy_set(
        tenant=acme, actor=ADMIN, record="recall_trace", kind="", sensitivity="", days=7
    )
    retention_policy_set(
        tenant=acme, actor=ADMIN, record="event", kind="tool_result", sensitivity="", days=30
    )

    page = login(editor).get("/dashboard/").content.decode()

    assert "Recall traces: 7 days (0 past it now)" in page
    assert "Ledger events no memory cites: tool_result · any class: 30 days" in page


def test_events_no_memory_cites_and_recall_traces_past_their_period_go_by_beat_with_a_report(
    agent, acme, admin_user, alice, login
):
    retention_policy_set(tenant=acme, actor=ADMIN, record="event", kind="", sensitivity="", days=30)
    retention_policy_set(
        tenant=acme, actor=ADMIN, record="recall_trace", kind="", sensitivity="", days=7
    )
    # Sent with an Idempotency-Key: the stored reply repeats the text until it goes too.
    alone = agent.post(
        "/api/v1/events",
        {
            "subject": "user:alice",
            "kind": "user_statement",
            "text": f"I left my {CANARY} at the gym",
            "observed_at": timezone.now().isoformat(),
        },
        format="json",
        HTTP_IDEMPOTENCY_KEY="retention-alone",
    ).json()
    assert "common_idempotencyrecord" in tables_containing(CANARY)
    cited = post_event(agent, text="I live in Shanghai")
    memory = submit(agent, sources=[{"event": cited["id"]}])
    notes = post_event(agent, subject="project:gym", text=f"Minutes: a {CANARY} was found")
    fresh = post_event(agent, text="I like green tea")
    asked = recall(agent, query=f"where is the {CANARY}")
    nobody = recall(agent, subject="user:nobody", query=f"{CANARY} owner")
    recent = recall(agent, query="tea")
    # The ledger refuses any change but redaction: the test ages rows behind its back.
    with pgtrigger.ignore("memory.Event:event_only_redaction"):
        Event.objects.filter(pk__in=[alone["id"], cited["id"], notes["id"]]).update(
            recorded_at=timezone.now() - timedelta(days=40)
        )
    RecallTrace.objects.filter(pk__in=[asked["trace_id"], nobody["trace_id"]]).update(
        created_at=timezone.now() - timedelta(days=8)
    )
    assert RecallTrace.objects.get(pk=nobody["trace_id"]).subject_id is None

    assert retention_sweep_task() == 3

    deletions = {d.subject.key: d for d in DeletionRequest.objects.select_related("subject")}
    assert set(deletions) == {"user:alice", "project:gym", "user:nobody"}
    assert {d.scope for d in deletions.values()} == {"records"}
    assert {d.cause for d in deletions.values()} == {"retention"}
    assert [str(i) for i in deletions["user:alice"].event_ids] == [alone["id"]]
    assert [str(i) for i in deletions["user:alice"].trace_ids] == [asked["trace_id"]]
    assert [str(i) for i in deletions["user:nobody"].trace_ids] == [nobody["trace_id"]]
    sweep = AuditEvent.objects.get(verb="retention.swept")
    assert sweep.data["counts"] == {"claims": 0, "events": 2, "recall_traces": 2}
    # A second sweep before the workers ran asks for nothing twice.
    assert retention_sweep_task() == 0

    for deletion in deletions.values():
        done = deletion_run(deletion_id=deletion.pk, worker=WORKER)
        assert done is not None and done.status == DeletionStatus.COMPLETED
        assert done.report["clean"], [p for p in done.report["probes"] if not p["clean"]]
        assert done.report["cause"] == "retention"
    alice_report = DeletionRequest.objects.get(pk=deletions["user:alice"].pk).report
    assert alice_report["artifacts"]["events"] == {"redacted": 1}
    assert alice_report["artifacts"]["recall_traces"] == {"redacted": 1}
    assert alice_report["artifacts"]["idempotency_replies"]["redacted"] == 1
    assert tables_containing(CANARY) == {}
    # What a live memory rests on, and what is younger than its period, stays.
    assert Event.objects.get(pk=cited["id"]).redacted_at is None
    assert Event.objects.get(pk=fresh["id"]).text == "I like green tea"
    assert RecallTrace.objects.get(pk=recent["trace_id"]).query == "tea"
    assert Claim.objects.get(pk=memory["id"]).status == ClaimStatus.ACTIVE
    # The admins see what each period reaches and what the last sweep counted.
    page = login(admin_user).get("/settings/retention/").content.decode()
    assert "Ledger events no memory cites" in page and "Recall traces" in page
    assert "(0 claims, 2 events, 2 traces)" in page
    # The person reads why, in plain words.
    report = login(alice).get(f"/me/deletions/{deletions['user:alice'].pk}/").content.decode()
    assert "These records are older than the retention period" in report
    assert "What passed its retention period is gone from memdesk" in report


def test_event_periods_follow_the_event_kind_and_traces_take_no_kind(acme, admin_user, login):
    client = login(admin_user)
    client.get("/settings/retention/")
    token = client.cookies["csrftoken"].value

    saved = client.post(
        "/settings/retention/",
        {"record": "event", "kind": "tool_result", "sensitivity": "", "days": "14"},
        HTTP_X_CSRFTOKEN=token,
    )
    refused = client.post(
        "/settings/retention/",
        {"record": "recall_trace", "kind": "fact", "sensitivity": "", "days": "14"},
        HTTP_X_CSRFTOKEN=token,
    )
    odd = client.post(
        "/settings/retention/",
        {"record": "event", "kind": "tool result; drop", "sensitivity": "", "days": "14"},
        HTTP_X_CSRFTOKEN=token,
    )
    with pytest.raises(Problem) as trailing:
        retention_policy_set(
            tenant=acme, actor=ADMIN, record="event", kind="tool_result\n", sensitivity="", days=1
        )
    assert trailing.value.code == "validation_error"

    assert saved.status_code == 302
    assert refused.status_code == 400 and "no kind or class" in refused.content.decode()
    assert odd.status_code == 400 and "An event kind" in odd.content.decode()
    (policy,) = RetentionPolicy.objects.filter(tenant=acme)
    assert (policy.record, policy.kind, policy.days) == ("event", "tool_result", 14)
