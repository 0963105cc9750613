"""Receipts over the API: write before the call, duplicates, secrets, tenants, the timeline,
editors settling manual_review through the review queue, checkpoints, metrics and schema."""

from __future__ import annotations

import pytest

from accounts.actors import Actor
from accounts.models import AuditEvent
from common.fingerprints import fingerprint
from common.models import IdempotencyRecord
from config.demo.receipts import seed_receipts
from memory.receipts.models.receipts import Checkpoint, Receipt, ReceiptState, ReceiptTransition
from memory.receipts.services.recovery import recovery_decide
from reviews.models import ItemStatus, ReviewItem

# Receipts here look up on `blog`, registered at https://blog.example/api/.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("blog_platform")]

INTENT = {"title": "Receipts before calls", "slug": "receipts-before-calls", "tags": ["a", "b"]}


def receipt_body(**overrides):
    body = {
        "operation": "articles.create",
        "target": "https://blog.example/api/articles",
        "intent": INTENT,
        "idempotency_key": "pub-2026-08-16-a",
        "reconciler": {
            "adapter": "http",
            "lookup_url": "https://blog.example/api/articles?key={idempotency_key}",
            "absence_proof": "status_404",
            "external_id_field": "id",
        },
    }
    body.update(overrides)
    return body


def create(agent, **overrides):
    return agent.post("/api/v1/receipts", receipt_body(**overrides), format="json")


def transition(agent, receipt_id, **body):
    return agent.post(f"/api/v1/receipts/{receipt_id}/transitions", body, format="json")


# -- create -----------------------------------------------------------------------


def test_it_records_a_planned_receipt_with_the_intent_fingerprint(agent):
    response = create(agent)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["state"] == "planned"
    assert body["intent_fingerprint"] == fingerprint(INTENT)
    assert body["intent_fingerprint"].startswith("sha256:")
    assert body["reconciler"] == {
        "adapter": "http",
        "lookup_url": "https://blog.example/api/articles?key={idempotency_key}",
        "absence_proof": "status_404",
        "external_id_field": "id",
        "platform": "blog",
    }
    assert response.headers["Location"] == f"/api/v1/receipts/{body['id']}"
    receipt = Receipt.objects.get(pk=body["id"])
    assert receipt.platform.name == "blog"
    assert receipt.agent == "acme-agent"
    assert receipt.token_id == agent.token.pk
    assert AuditEvent.objects.filter(verb="receipt.created", target_id=body["id"]).exists()


def test_the_fingerprint_is_over_canonical_json(agent):
    first = create(agent).json()
    reordered = {
        "tags": ["a", "b"],
        "slug": "receipts-before-calls",
        "title": "Receipts before calls",
    }
    again = create(agent, intent=reordered)
    assert again.status_code == 200
    assert again.json()["id"] == first["id"]


def test_a_duplicate_trigger_returns_the_existing_receipt_in_its_current_state(agent):
    first = create(agent).json()
    transition(agent, first["id"], to="submitted")
    transition(agent, first["id"], to="succeeded", external_id="art_1042")
    again = create(agent)
    assert again.status_code == 200
    assert again.json()["id"] == first["id"]
    assert again.json()["state"] == "succeeded"
    assert again.json()["external_id"] == "art_1042"
    assert Receipt.objects.count() == 1


@pytest.mark.parametrize(
    "change",
    [
        {"intent": {**INTENT, "title": "Another title"}},
        {"operation": "articles.update"},
        {"target": "https://other.example/api/articles"},
    ],
)
def test_the_same_key_for_another_effect_is_409(agent, change):
    first = create(agent).json()
    other = create(agent, **change)
    assert other.status_code == 409
    assert other.json()["code"] == "idempotency_key_reused"
    assert other.json()["receipt"] == first["id"]
    assert Receipt.objects.count() == 1


def test_keys_are_per_tenant(agent, globex_agent):
    assert create(agent).status_code == 201
    assert create(globex_agent, intent={"something": "else"}).status_code == 201


@pytest.mark.parametrize(
    "field, value",
    [
        ("intent", {**INTENT, "api_key": "sk_live_4eC39HqLyjWDarjtT1zdp7dc"}),
        ("intent", {"credentials": {"aws": "AKIAIOSFODNN7EXAMPLE"}}),
        (
            "reconciler",
            {
                "adapter": "http",
                "lookup_url": "https://blog.example/a?token=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",
            },
        ),
    ],
)
def test_a_secret_is_refused_and_nothing_is_stored(agent, field, value):
    response = create(agent, **{field: value})
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "secret_in_intent"
    assert field in body["errors"]
    assert not Receipt.objects.exists()
    assert not ReceiptTransition.objects.exists()
    assert not AuditEvent.objects.filter(verb__startswith="receipt.").exists()
    assert "sk_live" not in str(body) and "AKIA" not in str(body) and "ghp_" not in str(body)


@pytest.mark.parametrize(
    "reconciler, field",
    [
        ({"adapter": "carrier-pigeon"}, "reconciler.adapter"),
        ({"adapter": "http"}, "reconciler.lookup_url"),
        (
            {"adapter": "http", "lookup_url": "ftp://blog.example/{idempotency_key}"},
            "reconciler.lookup_url",
        ),
        ({"adapter": "http", "lookup_url": "https://b.example/{slug}"}, "reconciler.lookup_url"),
        ({"adapter": "http", "lookup_url": "https://u:p@b.example/x"}, "reconciler.lookup_url"),
        (
            {"adapter": "http", "lookup_url": "https://b.example/x", "absence_prof": "status_404"},
            "reconciler.absence_prof",
        ),
        (
            {"adapter": "http", "lookup_url": "https://b.example/x", "absence_proof": "silence"},
            "reconciler.absence_proof",
        ),
        ({"adapter": "manual", "key_retention_seconds": -1}, "reconciler.key_retention_seconds"),
    ],
)
def test_a_reconciler_that_cannot_work_is_refused(agent, reconciler, field):
    response = create(agent, reconciler=reconciler)
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_reconciler"
    assert field in response.json()["errors"]
    assert not Receipt.objects.exists()


def test_a_lookup_outside_every_registered_platform_is_refused(agent):
    assert create(agent).status_code == 201
    other = create(
        agent,
        idempotency_key="k2",
        reconciler={"adapter": "http", "lookup_url": "http://169.254.169.254/{idempotency_key}"},
    )
    assert other.status_code == 400
    assert other.json()["code"] == "platform_not_registered"
    assert "reconciler.lookup_url" in other.json()["errors"]
    assert not Receipt.objects.filter(idempotency_key="k2").exists()


def test_without_a_reconciler_a_person_settles_unknown_outcomes(agent):
    body = receipt_body()
    del body["reconciler"]
    response = agent.post("/api/v1/receipts", body, format="json")
    assert response.status_code == 201
    assert response.json()["reconciler"] == {"adapter": "manual"}


def test_the_idempotency_key_header_replays_and_stands_in_for_the_body_key(agent):
    body = receipt_body()
    del body["idempotency_key"]
    first = agent.post("/api/v1/receipts", body, format="json", HTTP_IDEMPOTENCY_KEY="hdr-1")
    assert first.status_code == 201
    assert first.json()["idempotency_key"] == "hdr-1"
    replay = agent.post("/api/v1/receipts", body, format="json", HTTP_IDEMPOTENCY_KEY="hdr-1")
    assert replay.status_code == 201
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json() == first.json()
    assert Receipt.objects.count() == 1


def test_a_receipt_without_a_key_is_named_by_its_content(agent):
    """No key in the body or header: memdesk derives one (tests/memory/test_runs.py)."""
    body = receipt_body()
    del body["idempotency_key"]
    response = agent.post("/api/v1/receipts", body, format="json")
    assert response.status_code == 201
    assert response.json()["idempotency_key"].startswith("derived:sha256:")


def test_the_intent_must_be_an_object(agent):
    response = create(agent, intent=["not", "an", "object"])
    assert response.status_code == 400
    assert "intent" in response.json()["errors"]


# -- access ------------------------------------------------------------------------


def test_receipts_need_the_receipts_capability(acme, make_agent, session_api, editor):
    reader = make_agent(acme, name="reader", capabilities=["recall"])
    for response in (create(reader), reader.get("/api/v1/receipts")):
        assert response.status_code == 403
        assert response.json()["code"] == "capability_required"
    assert session_api(editor).get("/api/v1/receipts").status_code == 403


def test_another_tenants_receipt_is_404(agent, globex_agent):
    receipt = create(agent).json()
    assert globex_agent.get(f"/api/v1/receipts/{receipt['id']}").status_code == 404
    moved = transition(globex_agent, receipt["id"], to="submitted")
    assert moved.status_code == 404
    assert moved.json()["code"] == "not_found"
    assert globex_agent.get("/api/v1/receipts").json()["results"] == []
    assert Receipt.objects.get(pk=receipt["id"]).state == "planned"


# -- transitions and the timeline ---------------------------------------------------


def test_an_agent_reports_the_call_and_the_timeline_shows_it(agent):
    receipt = create(agent).json()
    submitted = transition(agent, receipt["id"], to="submitted", lease_seconds=30)
    assert submitted.status_code == 200
    assert submitted.json()["state"] == "submitted"
    assert submitted.json()["submit_lease_expires_at"] is not None
    done = transition(
        agent,
        receipt["id"],
        to="succeeded",
        external_id="art_1042",
        evidence={"status": 201, "location": "/articles/art_1042"},
    )
    assert done.status_code == 200
    assert done.json()["external_id"] == "art_1042"
    assert done.json()["submit_lease_expires_at"] is None
    detail = agent.get(f"/api/v1/receipts/{receipt['id']}").json()
    timeline = [(t["from"], t["to"], t["actor"]["label"]) for t in detail["transitions"]]
    assert timeline == [
        ("", "planned", "acme-agent"),
        ("planned", "submitted", "acme-agent"),
        ("submitted", "succeeded", "acme-agent"),
    ]
    assert detail["transitions"][-1]["evidence"] == {
        "status": 201,
        "location": "/articles/art_1042",
    }
    assert detail["transitions"][-1]["actor"]["kind"] == "agent"
    assert detail["reads"] == []


@pytest.mark.parametrize("target", ["reconciling", "safe_to_retry", "manual_review", "succeeded"])
def test_an_illegal_move_is_409_with_the_allowed_moves(agent, target):
    receipt = create(agent).json()
    response = transition(agent, receipt["id"], to=target)
    assert response.status_code == 409
    assert response.json()["code"] == "illegal_transition"
    assert response.json()["allowed"] == ["submitted"]
    assert Receipt.objects.get(pk=receipt["id"]).state == "planned"


def test_an_agent_cannot_settle_what_reconciliation_settles(agent):
    receipt = create(agent).json()
    transition(agent, receipt["id"], to="submitted")
    transition(agent, receipt["id"], to="outcome_unknown", error_code="timeout")
    late = transition(agent, receipt["id"], to="succeeded", external_id="art_1")
    assert late.status_code == 409
    assert late.json()["allowed"] == []


def test_an_unknown_state_is_a_validation_error(agent):
    receipt = create(agent).json()
    response = transition(agent, receipt["id"], to="teleported")
    assert response.status_code == 400
    assert "to" in response.json()["errors"]


def test_a_secret_in_evidence_is_refused(agent):
    receipt = create(agent).json()
    transition(agent, receipt["id"], to="submitted")
    response = transition(
        agent,
        receipt["id"],
        to="succeeded",
        evidence={"authorization": "Bearer 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"},
    )
    assert response.status_code == 400
    assert response.json()["code"] == "secret_in_evidence"
    assert Receipt.objects.get(pk=receipt["id"]).state == "submitted"


def test_a_lease_only_goes_with_submitted(agent):
    receipt = create(agent).json()
    transition(agent, receipt["id"], to="submitted")
    response = transition(agent, receipt["id"], to="outcome_unknown", lease_seconds=60)
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_lease"
    assert Receipt.objects.get(pk=receipt["id"]).state == "submitted"


def test_a_second_external_id_is_a_conflict(agent):
    receipt = create(agent).json()
    transition(agent, receipt["id"], to="submitted", external_id="art_1")
    response = transition(agent, receipt["id"], to="succeeded", external_id="art_2")
    assert response.status_code == 409
    assert response.json()["code"] == "external_id_conflict"


def test_transition_retries_with_an_idempotency_key_replay(agent):
    receipt = create(agent).json()
    first = agent.post(
        f"/api/v1/receipts/{receipt['id']}/transitions",
        {"to": "submitted"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="t-1",
    )
    again = agent.post(
        f"/api/v1/receipts/{receipt['id']}/transitions",
        {"to": "submitted"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="t-1",
    )
    assert first.status_code == again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert ReceiptTransition.objects.filter(receipt_id=receipt["id"]).count() == 2


def test_lists_filter_by_state_and_operation_with_a_cursor(agent):
    ids = []
    for n in range(5):
        body = create(agent, idempotency_key=f"k{n}", intent={"n": n}).json()
        ids.append(body["id"])
    transition(agent, ids[0], to="submitted")
    create(agent, idempotency_key="other", operation="comments.create", intent={"c": 1})

    page = agent.get("/api/v1/receipts?operation=articles.create&limit=2").json()
    assert [r["id"] for r in page["results"]] == [ids[4], ids[3]]
    second = agent.get(page["next"]).json()
    assert [r["id"] for r in second["results"]] == [ids[2], ids[1]]
    submitted = agent.get("/api/v1/receipts?state=submitted").json()
    assert [r["id"] for r in submitted["results"]] == [ids[0]]
    assert submitted["next"] is None
    assert agent.get("/api/v1/receipts?state=nonsense").status_code == 400


def test_the_list_query_count_does_not_grow_with_the_page(agent, django_assert_max_num_queries):
    for n in range(20):
        create(agent, idempotency_key=f"k{n}", intent={"n": n})
    with django_assert_max_num_queries(6):
        response = agent.get("/api/v1/receipts?limit=20")
    assert len(response.json()["results"]) == 20


# -- manual_review through the review queue ---------------------------------------


# -- checkpoints --------------------------------------------------------------------


def test_a_checkpoint_is_saved_replaced_and_read(agent):
    receipt = create(agent).json()
    body = {
        "run_id": "run-1",
        "input_fingerprint": "sha256:abc",
        "stage": "publish",
        "stage_complete": False,
        "retry_count": 1,
        "max_retries": 3,
        "allowed_next_stages": ["verify"],
        "effects": [receipt["id"]],
        "expires_at": "2030-01-01T00:00:00Z",
    }
    saved = agent.put("/api/v1/checkpoints/daily-publish", body, format="json")
    assert saved.status_code == 200, saved.json()
    assert saved.json()["effects"] == [receipt["id"]]
    replaced = agent.put(
        "/api/v1/checkpoints/daily-publish", {**body, "stage": "verify"}, format="json"
    )
    assert replaced.json()["stage"] == "verify"
    assert Checkpoint.objects.count() == 1
    read = agent.get("/api/v1/checkpoints/daily-publish").json()
    assert read["stage"] == "verify" and read["task_key"] == "daily-publish"
    assert AuditEvent.objects.filter(verb="checkpoint.saved").count() == 2


def test_checkpoint_effects_must_be_the_tenants_receipts(agent, globex_agent):
    theirs = create(globex_agent).json()
    response = agent.put(
        "/api/v1/checkpoints/t",
        {"input_fingerprint": "f", "stage": "s", "effects": [theirs["id"]]},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["code"] == "unknown_effect"
    assert not Checkpoint.objects.exists()


def test_checkpoints_are_per_tenant_and_need_their_capability(
    agent, globex_agent, acme, make_agent
):
    agent.put("/api/v1/checkpoints/t", {"input_fingerprint": "f", "stage": "s"}, format="json")
    assert globex_agent.get("/api/v1/checkpoints/t").status_code == 404
    receipts_only = make_agent(acme, name="receipts-only", capabilities=["receipts:write"])
    refused = receipts_only.put(
        "/api/v1/checkpoints/t", {"input_fingerprint": "f", "stage": "s"}, format="json"
    )
    assert refused.status_code == 403
    assert refused.json()["code"] == "capability_required"


# -- operations ---------------------------------------------------------------------


def test_metrics_show_receipts_reconciliation_and_recovery(client, make_receipt, acme, actors):
    make_receipt(ReceiptState.SUBMITTED)
    make_receipt(ReceiptState.SUBMITTED)
    make_receipt(ReceiptState.SAFE_TO_RETRY)
    make_receipt(ReceiptState.MANUAL_REVIEW)
    recovery_decide(tenant=acme, actor=actors.agent, task_key="never-saved", input_fingerprint="f")
    body = client.get("/metrics").content.decode()
    assert 'memdesk_receipts{state="submitted"} 2.0' in body
    assert 'memdesk_receipts{state="planned"} 0.0' in body
    assert 'memdesk_reconciliation_outcomes_total{outcome="safe_to_retry"} 1.0' in body
    assert 'memdesk_reconciliation_outcomes_total{outcome="manual_review"} 1.0' in body
    assert 'memdesk_reconciliation_outcomes_total{outcome="succeeded"} 0.0' in body
    assert 'memdesk_recovery_decisions_total{decision="fresh",reason="no_checkpoint"}' in body
    assert 'memdesk_review_queue_depth{queue="manual_review"} 1.0' in body


def test_the_schema_documents_receipts_checkpoints_and_recovery(client):
    paths = client.get("/api/schema/?format=json").json()["paths"]
    for path in [
        "/api/v1/receipts",
        "/api/v1/receipts/{receipt_id}",
        "/api/v1/receipts/{receipt_id}/transitions",
        "/api/v1/checkpoints/{task_key}",
        "/api/v1/recovery",
    ]:
        assert path in paths, path
    assert "secret_in_intent" in paths["/api/v1/receipts"]["post"]["description"]
    assert "illegal_transition" in str(paths["/api/v1/receipts/{receipt_id}/transitions"]["post"])
    assert "no_checkpoint" in paths["/api/v1/recovery"]["post"]["description"]


def test_the_demo_has_receipts_in_several_states_and_one_waiting_for_a_person(acme, agent):
    seed_receipts(tenant=acme)
    states = set(Receipt.objects.filter(tenant=acme).values_list("state", flat=True))
    assert {"planned", "submitted", "succeeded", "rejected", "manual_review"} <= states
    waiting = Receipt.objects.get(tenant=acme, state="manual_review")
    assert ReviewItem.objects.filter(
        queue="manual_review", target_id=str(waiting.pk), status=ItemStatus.OPEN
    ).exists()
    assert (
        recovery_decide(
            tenant=acme,
            actor=Actor.system(),
            task_key="thread-reply:t-881",
            input_fingerprint=fingerprint({"thread": "t-881"}),
        ).decision
        == "escalate"
    )
    assert not IdempotencyRecord.objects.exists()
