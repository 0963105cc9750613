"""Proof of absence belongs to the platform: what the admin registered decides, never the
receipt. Each finding is reproduced against the fake platform over loopback.

Without proof the answer is "I can't tell", and a person decides: a receipt
never becomes `safe_to_retry` because an agent said a 404 was proof, because
a URL without the key answered 404, because a search found somebody else's
record, because the platform had not caught up yet, or after it forgot the key.
"""

from __future__ import annotations

import io
import uuid
from datetime import timedelta

import httpx
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import AuditEvent
from memory.receipts.models.platforms import Platform
from memory.receipts.models.receipts import Receipt, ReceiptState
from memory.receipts.services.platforms import platform_register
from memory.receipts.services.receipt_reads import (
    receipt_read,
    receipt_reconcile_claim,
    receipt_reconcile_settle,
    receipts_reconcile,
)
from memory.receipts.services.receipt_sweeps import receipts_due_ids
from memory.receipts.services.reconciliation import receipts_reconcile_batch
from reviews.models import ReviewItem
from testing.fake_platform import WRITE_COMMIT_THEN_DROP, WRITE_DROP_BEFORE_COMMIT
from tests.memory.conftest import PUBLIC_ADDRESS, http_reconciler, register_proving_platform

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_reconcile")]


def plan_and_submit(agent, platform, reconciler: dict) -> dict:
    key = f"pub-{uuid.uuid4().hex[:8]}"
    created = agent.post(
        "/api/v1/receipts",
        {
            "operation": "articles.create",
            "target": f"{platform.url}/articles",
            "intent": {"title": "Receipts before calls", "slug": key},
            "idempotency_key": key,
            "reconciler": reconciler,
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    receipt = created.json()
    submitted = agent.post(
        f"/api/v1/receipts/{receipt['id']}/transitions", {"to": "submitted"}, format="json"
    )
    assert submitted.status_code == 200, submitted.json()
    return receipt


def write_then_lose_the_answer(agent, platform, receipt: dict, mode: str) -> None:
    """The agent's one write, whose answer never arrives, and its report of that."""
    platform.write_mode = mode
    with pytest.raises(httpx.TransportError):
        httpx.post(
            f"{platform.url}/articles",
            json=receipt["intent"],
            headers={"Idempotency-Key": receipt["idempotency_key"]},
            timeout=2,
        )
    reported = agent.post(
        f"/api/v1/receipts/{receipt['id']}/transitions",
        {"to": "outcome_unknown", "error_code": "connection_dropped"},
        format="json",
    )
    assert reported.status_code == 200, reported.json()


def state_of(agent, receipt: dict) -> dict:
    return agent.get(f"/api/v1/receipts/{receipt['id']}").json()


def test_an_agents_own_absence_proof_does_not_make_a_404_proof(agent, platform, actors):
    # The platform is registered without a proof; the agent claims one anyway.
    assert platform.registered.absence_proof == "none"
    receipt = plan_and_submit(
        agent,
        platform,
        http_reconciler(platform, absence_proof="status_404", key_retention_seconds=86400),
    )
    write_then_lose_the_answer(agent, platform, receipt, WRITE_DROP_BEFORE_COMMIT)
    receipts_reconcile(receipt_ids=[receipt["id"]], worker=actors.worker)
    read_once = state_of(agent, receipt)
    assert read_once["state"] == "reconciling"
    assert read_once["reads"][0]["outcome"] == "undetermined"
    assert read_once["reads"][0]["error_code"] == "not_found_unproven"
    for _ in range(4):
        receipts_reconcile(receipt_ids=[receipt["id"]], worker=actors.worker)
    settled = state_of(agent, receipt)
    assert settled["state"] == "manual_review"
    assert "safe_to_retry" not in [t["to"] for t in settled["transitions"]]
    assert ReviewItem.objects.filter(queue="manual_review", target_id=receipt["id"]).exists()
    assert platform.requests["POST"] == 1


def test_a_404_from_a_lookup_without_the_key_proves_nothing(agent, platform, actors):
    proving = register_proving_platform(platform, proof="status_lookup")
    # Under the platform, but the same URL for every receipt: its 404 says nothing of this one.
    receipt = plan_and_submit(
        agent,
        platform,
        {
            "adapter": "http",
            "platform": proving.name,
            "lookup_url": f"{platform.url}/articles",
            "absence_proof": "status_404",
        },
    )
    write_then_lose_the_answer(agent, platform, receipt, WRITE_DROP_BEFORE_COMMIT)
    receipts_reconcile(receipt_ids=[receipt["id"]], worker=actors.worker)
    read = state_of(agent, receipt)
    assert read["state"] == "reconciling"
    assert read["reads"][0]["error_code"] == "not_found_unproven"
    assert read["reads"][0]["evidence"]["status_code"] == 404
    assert read["reads"][0]["evidence"]["absence_proof"] == "none"
    assert platform.reads_by_key[""] == 1  # the key was never in the URL


def test_the_registered_lookup_by_key_proves_absence(agent, platform, actors):
    receipt = plan_and_submit(agent, platform, http_reconciler(platform, proven_by="status_lookup"))
    write_then_lose_the_answer(agent, platform, receipt, WRITE_DROP_BEFORE_COMMIT)
    receipts_reconcile(receipt_ids=[receipt["id"]], worker=actors.worker)
    settled = state_of(agent, receipt)
    assert settled["state"] == "safe_to_retry"
    assert settled["transitions"][-1]["reason"] == "absence_proven"
    assert settled["transitions"][-1]["evidence"]["absence_proof"] == "status_lookup"
    assert platform.reads_by_key[receipt["idempotency_key"]] == 1


def test_a_search_hit_for_another_intent_goes_to_a_person(agent, platform, actors):
    receipt = plan_and_submit(agent, platform, http_reconciler(platform, proven_by="search_by_key"))
    write_then_lose_the_answer(agent, platform, receipt, WRITE_DROP_BEFORE_COMMIT)
    # Somebody else's write filed under the same key on the platform.
    platform.seed(
        receipt["idempotency_key"],
        article_id="art_other",
        body={"title": "Another article", "slug": receipt["intent"]["slug"]},
    )
    receipts_reconcile(receipt_ids=[receipt["id"]], worker=actors.worker)
    settled = state_of(agent, receipt)
    assert settled["state"] == "manual_review"
    assert settled["external_id"] == ""
    last = settled["transitions"][-1]
    assert last["reason"] == "intent_fingerprint_mismatch"
    assert last["evidence"]["intent_fingerprint"] == receipt["intent_fingerprint"]
    assert last["evidence"]["record_fingerprint"].startswith("sha256:")
    assert last["evidence"]["record_fingerprint"] != receipt["intent_fingerprint"]
    item = ReviewItem.objects.get(queue="manual_review", target_id=receipt["id"])
    assert item.reason_codes == ["intent_fingerprint_mismatch"]


def test_a_search_hit_carrying_the_intent_is_the_receipts_effect(agent, platform, actors):
    receipt = plan_and_submit(agent, platform, http_reconciler(platform, proven_by="search_by_key"))
    write_then_lose_the_answer(agent, platform, receipt, WRITE_COMMIT_THEN_DROP)
    receipts_reconcile(receipt_ids=[receipt["id"]], worker=actors.worker)
    settled = state_of(agent, receipt)
    assert settled["state"] == "succeeded"
    assert settled["external_id"] == platform.articles[receipt["idempotency_key"]]["id"]
    evidence = settled["transitions"][-1]["evidence"]
    assert evidence["record_fingerprint"] == receipt["intent_fingerprint"]


def test_an_absence_within_the_consistency_delay_is_read_again_after_it(agent, platform, actors):
    receipt = plan_and_submit(
        agent,
        platform,
        http_reconciler(platform, proven_by="status_lookup", consistency_delay_seconds=300),
    )
    write_then_lose_the_answer(agent, platform, receipt, WRITE_DROP_BEFORE_COMMIT)
    receipts_reconcile(receipt_ids=[receipt["id"]], worker=actors.worker)
    row = Receipt.objects.get(pk=receipt["id"])
    assert row.state == ReceiptState.RECONCILING
    assert row.error_code == "absence_within_consistency_delay"
    assert row.reconcile_lease_expires_at is None
    trusted_from = row.submitted_at + timedelta(seconds=300)
    assert row.next_reconcile_at == trusted_from
    assert state_of(agent, receipt)["reads"][0]["outcome"] == "absent"
    # The next read is found again from the row, not from a timer in a worker.
    assert row.pk not in receipts_due_ids(now=trusted_from - timedelta(seconds=1))
    assert row.pk in receipts_due_ids(now=trusted_from)
    later = trusted_from + timedelta(seconds=1)
    claim = receipt_reconcile_claim(receipt_id=row.pk, worker=actors.worker, now=later)
    assert claim is not None
    receipt_reconcile_settle(
        claim=claim, result=receipt_read(claim), worker=actors.worker, now=later
    )
    settled = state_of(agent, receipt)
    assert settled["state"] == "safe_to_retry"
    assert settled["transitions"][-1]["reason"] == "absence_proven"
    assert platform.reads == 2


def test_the_batch_path_waits_for_the_consistency_delay_too(agent, platform, actors):
    receipt = plan_and_submit(
        agent,
        platform,
        http_reconciler(platform, proven_by="search_by_key", consistency_delay_seconds=300),
    )
    write_then_lose_the_answer(agent, platform, receipt, WRITE_DROP_BEFORE_COMMIT)
    receipts_reconcile_batch(worker=actors.worker, receipt_ids=[receipt["id"]])
    row = Receipt.objects.get(pk=receipt["id"])
    assert row.state == ReceiptState.RECONCILING
    assert row.next_reconcile_at == row.submitted_at + timedelta(seconds=300)
    assert row.error_code == "absence_within_consistency_delay"


def test_past_the_platforms_key_retention_absence_is_not_proven(agent, platform, actors):
    # The agent claims a far longer retention than the platform's admin registered.
    receipt = plan_and_submit(
        agent,
        platform,
        http_reconciler(platform, proven_by="status_lookup", key_retention_seconds=60)
        | {"key_retention_seconds": 10**9},
    )
    write_then_lose_the_answer(agent, platform, receipt, WRITE_DROP_BEFORE_COMMIT)
    Receipt.objects.filter(pk=receipt["id"]).update(
        submitted_at=timezone.now() - timedelta(minutes=2)
    )
    receipts_reconcile(receipt_ids=[receipt["id"]], worker=actors.worker)
    settled = state_of(agent, receipt)
    assert settled["state"] == "manual_review"
    assert settled["transitions"][-1]["reason"] == "key_retention_expired"


def test_an_agents_retention_does_not_cut_a_platforms_proof_short(agent, platform, actors):
    receipt = plan_and_submit(
        agent,
        platform,
        http_reconciler(platform, proven_by="status_lookup") | {"key_retention_seconds": 1},
    )
    write_then_lose_the_answer(agent, platform, receipt, WRITE_DROP_BEFORE_COMMIT)
    Receipt.objects.filter(pk=receipt["id"]).update(
        submitted_at=timezone.now() - timedelta(minutes=2)
    )
    receipts_reconcile(receipt_ids=[receipt["id"]], worker=actors.worker)
    assert state_of(agent, receipt)["state"] == "safe_to_retry"


# -- registration ---------------------------------------------------------------------


def _form(client, **fields):
    client.get("/platforms/")
    return client.post(
        "/platforms/",
        {
            "name": "blog",
            "base_url": "https://blog.example/api/",
            "absence_proof": "status_lookup",
            "key_retention_seconds": "86400",
            "csrfmiddlewaretoken": client.cookies["csrftoken"].value,
            **fields,
        },
    )


def test_the_platform_form_refuses_a_lookup_without_the_key(login, admin_user, dns):
    dns.answer("blog.example", [PUBLIC_ADDRESS])
    client = login(admin_user)
    refused = _form(client, lookup_template="articles?key=fixed")
    assert refused.status_code == 400
    html = refused.content.decode()
    assert "The lookup must contain {idempotency_key}" in html
    assert not Platform.objects.filter(name="blog").exists()
    # Doubled braces are the literal text `{idempotency_key}`, not the receipt's key.
    escaped = _form(client, lookup_template="articles?key={{idempotency_key}}")
    assert escaped.status_code == 400
    assert "The lookup must contain {idempotency_key}" in escaped.content.decode()
    missing = _form(client, lookup_template="")
    assert missing.status_code == 400
    assert "A proof of absence needs the lookup by key" in missing.content.decode()
    assert not Platform.objects.filter(name="blog").exists()


def test_the_platform_form_registers_how_absence_is_proven(login, admin_user, acme, dns):
    dns.answer("blog.example", [PUBLIC_ADDRESS])
    client = login(admin_user)
    response = _form(
        client,
        lookup_template="articles?key={idempotency_key}",
        consistency_delay_seconds="30",
    )
    assert response.status_code == 302
    platform = Platform.objects.get(tenant=acme, name="blog")
    assert (
        platform.absence_proof,
        platform.lookup_template,
        platform.key_retention_seconds,
        platform.consistency_delay_seconds,
    ) == ("status_lookup", "articles?key={idempotency_key}", 86400, 30)
    listed = client.get("/platforms/").content.decode()
    assert "articles?key={idempotency_key}" in listed
    assert "key kept 86400 s" in listed


def test_the_api_refuses_a_lookup_without_the_key(login, admin_user, dns):
    dns.answer("blog.example", [PUBLIC_ADDRESS])
    client = login(admin_user)
    client.get("/platforms/")
    response = client.post(
        "/api/v1/platforms",
        {
            "name": "blog",
            "base_url": "https://blog.example/api/",
            "absence_proof": "search_by_key",
            "lookup_template": "search?q=recent",
            "key_retention_seconds": 3600,
        },
        content_type="application/json",
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
    )
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")
    body = response.json()
    assert body["code"] == "lookup_template_without_key"
    assert "lookup_template" in body["errors"]
    assert not Platform.objects.filter(name="blog").exists()


def test_an_admin_gives_a_registered_platform_a_proof_and_older_receipts_use_it(
    agent, platform, actors, login, admin_user
):
    # Planned while the platform proved nothing: the agent's own claim did not count.
    receipt = plan_and_submit(
        agent, platform, http_reconciler(platform, absence_proof="status_404")
    )
    write_then_lose_the_answer(agent, platform, receipt, WRITE_DROP_BEFORE_COMMIT)
    receipts_reconcile(receipt_ids=[receipt["id"]], worker=actors.worker)
    assert state_of(agent, receipt)["state"] == "reconciling"

    client = login(admin_user)
    client.get("/platforms/")
    token = client.cookies["csrftoken"].value
    refused = client.post(
        "/platforms/absence-proof/",
        {
            "platform": "fake",
            "absence_proof": "status_lookup",
            "lookup_template": "articles",
            "key_retention_seconds": "86400",
            "csrfmiddlewaretoken": token,
        },
    )
    assert refused.status_code == 400
    assert "The lookup must contain {idempotency_key}" in refused.content.decode()
    assert Platform.objects.get(pk=platform.registered.pk).absence_proof == "none"

    changed = client.post(
        "/platforms/absence-proof/",
        {
            "platform": "fake",
            "absence_proof": "status_lookup",
            "lookup_template": "articles?key={idempotency_key}",
            "key_retention_seconds": "86400",
            "csrfmiddlewaretoken": token,
        },
    )
    assert changed.status_code == 302
    audit = AuditEvent.objects.get(verb="platform.absence_proof_set")
    assert audit.actor_label == "ada"
    assert audit.data["before"]["absence_proof"] == "none"
    assert audit.data["after"]["lookup_template"] == "articles?key={idempotency_key}"

    Receipt.objects.filter(pk=receipt["id"]).update(next_reconcile_at=None)
    receipts_reconcile(receipt_ids=[receipt["id"]], worker=actors.worker)
    settled = state_of(agent, receipt)
    assert settled["state"] == "safe_to_retry"
    assert settled["transitions"][-1]["evidence"]["absence_proof"] == "status_lookup"


def test_the_api_changes_a_platforms_proof_and_hides_other_tenants(
    login, admin_user, acme, globex, dns
):
    dns.answer("blog.example", [PUBLIC_ADDRESS])
    theirs, _ = platform_register(
        tenant=globex,
        actor=Actor.system("test setup"),
        name="theirs",
        base_url="https://blog.example/api/",
    )
    ours, _ = platform_register(
        tenant=acme, actor=Actor.system("test setup"), name="blog", base_url=theirs.base_url
    )
    client = login(admin_user)
    client.get("/platforms/")
    csrf = client.cookies["csrftoken"].value
    body = {
        "absence_proof": "search_by_key",
        "lookup_template": "search?key={idempotency_key}",
        "key_retention_seconds": 3600,
        "consistency_delay_seconds": 20,
    }
    hidden = client.put(
        "/api/v1/platforms/theirs/absence-proof",
        body,
        content_type="application/json",
        HTTP_X_CSRFTOKEN=csrf,
    )
    assert hidden.status_code == 404
    assert Platform.objects.get(pk=theirs.pk).absence_proof == "none"
    changed = client.put(
        "/api/v1/platforms/blog/absence-proof",
        body,
        content_type="application/json",
        HTTP_X_CSRFTOKEN=csrf,
    )
    assert changed.status_code == 200, changed.json()
    assert {key: changed.json()[key] for key in body} == body
    ours.refresh_from_db()
    assert (ours.absence_proof, ours.consistency_delay_seconds) == ("search_by_key", 20)


def test_the_database_refuses_a_proof_without_a_lookup_by_key_or_a_retention(platform):
    rows = Platform.objects.filter(pk=platform.registered.pk)
    for fields in (
        {"absence_proof": "status_lookup", "key_retention_seconds": 60},
        {"absence_proof": "status_lookup", "lookup_template": "articles?key={idempotency_key}"},
        {"lookup_template": "articles?key=fixed"},
        {"absence_proof": "trust_me"},
    ):
        with pytest.raises(IntegrityError), transaction.atomic():
            rows.update(**fields)
    assert rows.get().absence_proof == "none"


def test_the_command_registers_a_proof_and_refuses_one_without_the_key(acme, dns):
    dns.answer("blog.example", [PUBLIC_ADDRESS])
    common = ["--tenant", acme.slug, "--name", "blog", "--base-url", "https://blog.example/api/"]
    with pytest.raises(CommandError, match="lookup_template_without_key"):
        call_command(
            "register_platform",
            *common,
            "--absence-proof=status_lookup",
            "--lookup-template=articles",
            "--key-retention-seconds=60",
            stdout=io.StringIO(),
        )
    assert not Platform.objects.filter(tenant=acme, name="blog").exists()
    call_command(
        "register_platform",
        *common,
        "--absence-proof=search_by_key",
        "--lookup-template=search?key={idempotency_key}",
        "--key-retention-seconds=60",
        "--consistency-delay-seconds=5",
        stdout=io.StringIO(),
    )
    registered = Platform.objects.get(tenant=acme, name="blog")
    assert (registered.absence_proof, registered.key_retention_seconds) == ("search_by_key", 60)
    assert registered.consistency_delay_seconds == 5
