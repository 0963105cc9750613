"""Sensitive memory needs the subject's consent; ephemeral values are never remembered.

Through the agent API (claims, batch, events), the end user's API and console,
and the deletion pipeline a withdrawal starts.
"""

from __future__ import annotations

import pytest
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import AuditEvent
from memory.claims.models import Claim, ClaimStatus, Event
from memory.privacy.models import Consent, DeletionRequest
from memory.privacy.models.lifecycle import DeletionStatus
from memory.privacy.services.deletion import deletion_run
from tests.dump import tables_containing
from tests.memory.helpers import candidate, post_event, submit

pytestmark = pytest.mark.django_db

CANARY = "quokkazephyr9921"
HTMX = {"HTTP_HX_REQUEST": "true"}
WORKER = Actor.system("test lifecycle worker")


def claim(agent, **overrides):
    body = candidate(authority="agent_inferred", basis="inference", **overrides)
    response = agent.post("/api/v1/claims", body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def grant(session_api, user, **consents):
    response = session_api(user).put("/api/v1/me/consents", {"consents": consents}, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def test_a_sensitive_memory_without_consent_is_rejected_and_nothing_of_it_is_kept(agent):
    verdict = claim(
        agent,
        predicate="condition",
        value=f"{CANARY} syndrome",
        text=f"Alice was diagnosed with {CANARY} syndrome",
    )

    assert verdict["decision"] == "rejected"
    assert verdict["reasons"] == ["consent_required"]
    assert verdict["consent_required"] == ["health"]
    assert verdict["sensitivity"] == "health"
    stored = Claim.objects.get(pk=verdict["id"])
    assert (stored.status, stored.value, stored.ngrams) == (ClaimStatus.REJECTED, None, [])
    assert stored.text == "[withheld: consent required]"
    assert stored.sources.count() == 0
    assert stored.consent_classes == ["health"]
    # Not in any row of any table: claims, sources, audit, idempotency replies.
    assert tables_containing(CANARY) == {}


# What an attacker found stored as `normal`: a medicine by name, a diagnosis in Russian, a
# diagnosis in base64, and one sentence per special category of personal data.
SPECIAL_CATEGORIES = [
    ("Alice takes Biktarvy every morning", "health"),
    ("Алисе поставили диагноз рак лёгких", "health"),
    ("QWxpY2UgaXMgSElWIHBvc2l0aXZl", "health"),  # "Alice is HIV positive"
    ("Alice is gay", "sexual_orientation"),
    ("Alice converted to Islam in 2020", "religion"),
    ("Alice is a member of the Labour Party", "political"),
    ("Alice is a shop steward for the Teamsters", "trade_union"),
    ("Alice is of Roma descent", "ethnic_origin"),
    ("Alice's DNA test shows a BRCA1 mutation", "genetic_biometric"),
    ("Alice was convicted of fraud in 2015", "criminal_record"),
]


@pytest.mark.parametrize(("text", "sensitivity"), SPECIAL_CATEGORIES)
def test_a_special_category_without_consent_is_rejected_naming_its_class(agent, text, sensitivity):
    verdict = claim(agent, predicate="note", value=text, text=text)

    assert (verdict["decision"], verdict["reasons"]) == ("rejected", ["consent_required"])
    assert verdict["consent_required"] == [sensitivity]
    assert verdict["sensitivity"] == sensitivity
    stored = Claim.objects.get(pk=verdict["id"])
    assert (stored.value, stored.text) == (None, "[withheld: consent required]")
    assert tables_containing(text) == {}


@pytest.mark.parametrize(("text", "sensitivity"), SPECIAL_CATEGORIES)
def test_a_special_category_with_consent_is_stored_with_its_class(
    agent, alice, session_api, text, sensitivity
):
    grant(session_api, alice, **{sensitivity: True})

    verdict = submit(agent, predicate="note", value=text, text=text)

    assert (verdict["decision"], verdict["sensitivity"]) == ("accepted", sensitivity)
    stored = Claim.objects.get(pk=verdict["id"])
    assert (stored.status, stored.sensitivity, stored.text) == (
        ClaimStatus.ACTIVE,
        sensitivity,
        text,
    )
    assert stored.consent_classes == [sensitivity]


def test_the_rules_read_chinese_and_the_hint_only_raises_the_class(agent):
    chinese = claim(agent, predicate="illness", value="糖尿病", text="爱丽丝有糖尿病")
    lowered = claim(
        agent,
        predicate="meds",
        value="insulin",
        text="Alice takes insulin daily",
        sensitivity="normal",
    )
    raised = claim(
        agent,
        predicate="plan",
        value="gold",
        text="Alice is on the gold plan",
        sensitivity="finance",
    )
    plain = claim(agent, predicate="drink", value="tea", text="Alice drinks tea")

    assert chinese["consent_required"] == ["health"]
    assert lowered["consent_required"] == ["health"]
    assert raised["consent_required"] == ["finance"]
    assert (plain["decision"], plain["sensitivity"], plain["consent_required"]) == (
        "needs_review",
        "normal",
        [],
    )


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Alice's verification code is 482913", "one_time_code"),
        ("您的验证码是 739201", "one_time_code"),
        ("The export is at /tmp/alice-export-8812.csv", "temporary_path"),
        ("Alice's session id: 9f8e7d6c5b4a3210", "session_id"),
    ],
)
def test_ephemeral_values_are_refused_in_claims_and_events(agent, text, kind):
    verdict = claim(agent, predicate="note", value=text, text=text)

    assert (verdict["decision"], verdict["reasons"]) == ("rejected", ["ephemeral_value"])
    assert Claim.objects.get(pk=verdict["id"]).text == "[withheld: ephemeral value]"
    event = agent.post(
        "/api/v1/events",
        {
            "subject": "user:alice",
            "kind": "tool_result",
            "text": text,
            "observed_at": timezone.now().isoformat(),
        },
        format="json",
    )
    assert event.status_code == 400
    assert event.json()["code"] == "ephemeral_value"
    assert kind in event.json()["kinds"]
    assert not Event.objects.exists()
    assert tables_containing(text) == {}


def test_a_sensitive_event_needs_consent_and_keeps_its_class(agent, alice, session_api):
    refused = agent.post(
        "/api/v1/events",
        {
            "subject": "user:alice",
            "kind": "user_statement",
            "text": f"My salary is {CANARY} a month",
            "observed_at": timezone.now().isoformat(),
        },
        format="json",
    )
    assert refused.status_code == 400
    assert refused.json()["code"] == "consent_required"
    assert refused.json()["consent_required"] == ["finance"]
    assert tables_containing(CANARY) == {}

    grant(session_api, alice, finance=True)
    kept = post_event(agent, text=f"My salary is {CANARY} a month")
    assert kept["sensitivity"] == "finance"


def test_granting_then_withdrawing_consent_deletes_what_it_covered_with_a_report(
    agent, alice, session_api, acme
):
    answer = grant(session_api, alice, health=True)
    assert {(r["subject"], r["sensitivity"]) for r in answer["results"] if r["granted"]} == {
        ("user:alice", "health")
    }
    covered = submit(
        agent,
        predicate="condition",
        value="asthma diagnosis",
        text=f"Alice has an asthma diagnosis, code {CANARY}",
    )
    assert (covered["decision"], covered["sensitivity"]) == ("accepted", "health")
    kept = submit(agent, predicate="drink", value="tea", text="Alice drinks tea")

    withdrawn = session_api(alice).put(
        "/api/v1/me/consents", {"consents": {"health": False}}, format="json"
    )

    assert withdrawn.status_code == 200, withdrawn.json()
    deletions = withdrawn.json()["deletions"]
    assert len(deletions) == 1
    assert not any(r["granted"] for r in withdrawn.json()["results"])
    request = DeletionRequest.objects.get(pk=deletions[0])
    assert (request.scope, str(request.claim_id), request.status) == (
        "claim",
        covered["id"],
        DeletionStatus.PENDING,
    )
    audit = AuditEvent.objects.get(verb="consent.withdrawn")
    assert audit.data == {"sensitivity": "health", "deletions": deletions}

    done = deletion_run(deletion_id=deletions[0], worker=WORKER)

    assert done is not None and done.status == DeletionStatus.COMPLETED
    assert done.report["clean"], done.report["probes"]
    assert done.report["artifacts"]["claims"] == {"erased": 1}
    report = session_api(alice).get(f"/api/v1/deletions/{deletions[0]}").json()
    assert report["status"] == "completed"
    assert Claim.objects.get(pk=covered["id"]).status == ClaimStatus.ERASED
    assert Claim.objects.get(pk=kept["id"]).status == ClaimStatus.ACTIVE
    assert tables_containing(CANARY) == {}
    # Without consent again, the same memory is refused.
    again = claim(agent, predicate="condition", value="asthma", text="Alice has asthma")
    assert again["consent_required"] == ["health"]


def test_withdrawing_consent_deletes_the_events_of_that_class_too_with_a_report(
    agent, alice, session_api, acme, login
):
    grant(session_api, alice, health=True, finance=True)
    # Finance events: one no claim cites, one a finance memory cites, one whose
    # strongest class is health but that speaks of money too; and events of other classes.
    alone = post_event(agent, text=f"My salary is {CANARY} a month")
    cited = post_event(agent, text=f"My salary rose to {CANARY}b")
    mixed = post_event(agent, text=f"My salary pays for the asthma diagnosis {CANARY}c")
    health = post_event(agent, text="My asthma diagnosis is years old")
    plain = post_event(agent, text="I like green tea")
    assert (alone["sensitivity"], cited["sensitivity"], mixed["sensitivity"]) == (
        "finance",
        "finance",
        "health",
    )
    memory = submit(
        agent,
        predicate="salary",
        value=f"{CANARY}b",
        text="Alice's salary rose",
        sources=[{"event": cited["id"]}],
    )
    assert memory["sensitivity"] == "finance"

    withdrawn = session_api(alice).put(
        "/api/v1/me/consents", {"consents": {"finance": False}}, format="json"
    )

    assert withdrawn.status_code == 200, withdrawn.json()
    deletions = DeletionRequest.objects.filter(pk__in=withdrawn.json()["deletions"])
    by_scope = {d.scope: d for d in deletions}
    assert set(by_scope) == {"claim", "records"}
    records = by_scope["records"]
    assert records.cause == by_scope["claim"].cause == "consent_withdrawn"
    assert set(map(str, records.event_ids)) == {alone["id"], cited["id"], mixed["id"]}
    assert records.trace_ids == []
    audit = AuditEvent.objects.get(verb="consent.withdrawn")
    assert sorted(audit.data["deletions"]) == sorted(str(d.pk) for d in deletions)

    # The records deletion first: the claim's deletion would redact the event it
    # cites and the others repeating its words ("salary") on its own.
    for deletion in deletions.order_by("-scope"):
        done = deletion_run(deletion_id=deletion.pk, worker=WORKER)
        assert done is not None and done.status == DeletionStatus.COMPLETED
        assert done.report["clean"], [p for p in done.report["probes"] if not p["clean"]]
    report = DeletionRequest.objects.get(pk=records.pk).report
    assert report["cause"] == "consent_withdrawn"
    read = session_api(alice).get(f"/api/v1/deletions/{records.pk}").json()
    assert (read["scope"], read["cause"], read["status"]) == (
        "records",
        "consent_withdrawn",
        "completed",
    )
    assert sorted(read["events"]) == sorted([alone["id"], cited["id"], mixed["id"]])
    assert read["recall_traces"] == [] and read["claim"] is None
    assert report["target"]["events"] == 3
    assert report["artifacts"]["events"] == {"redacted": 3}
    assert report["artifacts"]["claims"] == {"erased": 0}
    assert report["horizon"]["wal_and_backups"]["retention_days"] == 30
    gone = Event.objects.filter(pk__in=[alone["id"], cited["id"], mixed["id"]])
    assert all(e.redacted_at and e.text == "" and e.kind == "redacted" for e in gone)
    assert Event.objects.get(pk=health["id"]).text == "My asthma diagnosis is years old"
    assert Event.objects.get(pk=plain["id"]).redacted_at is None
    assert tables_containing(CANARY) == {}
    # The person reads why, in plain words.
    html = login(alice).get(f"/me/deletions/{records.pk}/").content.decode()
    assert "Deletion of records about" in html
    assert "You withdrew your consent for this kind of memory" in html
    assert "What you asked us to forget is gone from memdesk" in html


def test_deleting_everything_after_a_refusal_for_consent_completes_clean(agent, alice, session_api):
    refused = claim(agent, predicate="condition", value="asthma", text="Alice has asthma")
    assert refused["reasons"] == ["consent_required"]
    grant(session_api, alice, health=True)
    grant(session_api, alice, health=False)
    submit(agent, predicate="drink", value="tea", text="Alice drinks tea")

    accepted = session_api(alice).delete("/api/v1/me/memories")
    done = deletion_run(deletion_id=accepted.json()["deletion"], worker=WORKER)

    # The refused claim holds memdesk's placeholder, not Alice's words: "consent" is not
    # a word to look for (it would match the audit log's `consent.granted`).
    assert done.status == DeletionStatus.COMPLETED
    assert done.report["clean"], [p for p in done.report["probes"] if not p["clean"]]
    assert AuditEvent.objects.filter(verb="consent.granted").exists()


def test_withdrawing_what_was_never_granted_changes_nothing(alice, session_api):
    answer = grant(session_api, alice, minors=False)

    assert answer["deletions"] == []
    assert not AuditEvent.objects.filter(verb__startswith="consent.").exists()


def test_consents_are_for_people_and_their_own_subjects(agent, alice, bob, session_api):
    assert agent.get("/api/v1/me/consents").json()["code"] == "person_required"
    unknown = session_api(alice).put(
        "/api/v1/me/consents", {"consents": {"astrology": True}}, format="json"
    )
    assert unknown.status_code == 400
    assert unknown.json()["code"] == "validation_error"
    others = session_api(alice).put(
        "/api/v1/me/consents", {"consents": {"health": True}, "subject": "user:bob"}, format="json"
    )
    assert others.status_code == 404
    assert not Consent.objects.exists()
    listed = session_api(bob).get("/api/v1/me/consents").json()["results"]
    assert {r["subject"] for r in listed} == {"user:bob"}
    assert {r["sensitivity"] for r in listed} == {
        "sensitive",
        "health",
        "finance",
        "credentials_adjacent",
        "location",
        "minors",
        "sexual_orientation",
        "religion",
        "political",
        "trade_union",
        "ethnic_origin",
        "genetic_biometric",
        "criminal_record",
    }
    labels = {r["sensitivity"]: r["label"] for r in listed}
    assert labels["sexual_orientation"] == "Sex life or sexual orientation"
    assert labels["trade_union"] == "Trade-union membership"


def test_the_console_grants_and_withdraws_consent(agent, alice, login):
    client = login(alice)
    page = client.get("/me/").content.decode()
    assert "What you let agents remember" in page
    token = client.cookies["csrftoken"].value

    granted = client.post(
        "/me/consents",
        {"subject": "user:alice", "sensitivity": "location", "granted": "1"},
        HTTP_X_CSRFTOKEN=token,
        **HTMX,
    ).content.decode()
    assert granted.lstrip().startswith('<section id="consents"')
    assert "Consent granted." in granted
    covered = submit(
        agent, predicate="home_address", value="12 Elm Street", text="Alice's home address"
    )
    assert covered["sensitivity"] == "location"

    withdrawn = client.post(
        "/me/consents",
        {"subject": "user:alice", "sensitivity": "location", "granted": "0"},
        HTTP_X_CSRFTOKEN=token,
        **HTMX,
    ).content.decode()

    deletion = DeletionRequest.objects.get(claim_id=covered["id"])
    assert "what memdesk held of this kind is being deleted (1 deletion)" in withdrawn
    assert f"/me/deletions/{deletion.pk}/" in withdrawn
    assert not Consent.objects.get(sensitivity="location").granted
    forged = client.post(
        "/me/consents", {"subject": "user:alice", "sensitivity": "health", "granted": "1"}
    )
    assert forged.status_code == 403


def test_the_gate_rules_show_the_sensitivity_and_ephemeral_rules(agent):
    rules = agent.get("/api/v1/gate/rules").json()

    codes = {r["code"]: r["decision"] for r in rules["results"]}
    assert codes["consent_required"] == codes["ephemeral_value"] == "rejected"
    classes = {r["sensitivity"]: r["needs_consent"] for r in rules["sensitivity_rules"]}
    assert classes == {
        "minors": True,
        "health": True,
        "genetic_biometric": True,
        "sexual_orientation": True,
        "criminal_record": True,
        "religion": True,
        "ethnic_origin": True,
        "political": True,
        "trade_union": True,
        "credentials_adjacent": True,
        "finance": True,
        "location": True,
        "personal": False,
    }
    assert [r["kind"] for r in rules["ephemeral_rules"]] == [
        "one_time_code",
        "temporary_path",
        "session_id",
    ]
