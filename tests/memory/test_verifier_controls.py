"""Verifier negative controls: a platform carries a known-absent and a known-present key; beat
reads them through a real worker, a wrong answer marks the verifier unhealthy, and while it is,
no read of the platform makes a receipt `safe_to_retry` (docs/reconciliation.md)."""

from __future__ import annotations

import pytest
from celery import current_app
from django.test import Client
from rest_framework.test import APIClient

from accounts.models import AuditEvent
from memory.receipts.models.platforms import Platform
from memory.receipts.models.receipts import Receipt, ReceiptState, ReceiptTransition
from memory.receipts.services.verifier_controls import platform_controls_check
from reviews.models import ReviewItem
from tests.memory.conftest import http_reconciler
from tests.memory.test_reconcile_workers import wait_for

S = ReceiptState
ABSENT_KEY, PRESENT_KEY = "control-never-written", "control-kept"


def admin_api(admin_user):
    client = APIClient()
    client.force_login(admin_user)
    return client


def set_controls(client, name, **body):
    return client.put(f"/api/v1/platforms/{name}/controls", body, format="json")


@pytest.mark.django_db
def test_an_admin_sets_controls_on_the_api_and_the_console_and_others_cannot(
    admin_user, editor, session_api, login, platform
):
    name = platform.registered.name
    response = set_controls(
        admin_api(admin_user), name, known_absent_key=ABSENT_KEY, known_present_key=PRESENT_KEY
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["known_absent_key"], body["known_present_key"]) == (ABSENT_KEY, PRESENT_KEY)
    assert body["verifier_unhealthy_since"] is None
    audit = AuditEvent.objects.get(verb="platform.controls_set")
    assert audit.data["after"] == {"known_absent_key": ABSENT_KEY, "known_present_key": PRESENT_KEY}

    same = set_controls(admin_api(admin_user), name, known_absent_key="k", known_present_key="k")
    assert (same.status_code, same.json()["code"]) == (400, "controls_identical")
    refused = set_controls(session_api(editor), name, known_absent_key="other")
    assert refused.status_code == 403
    assert set_controls(admin_api(admin_user), "nowhere", known_absent_key="x").status_code == 404
    assert Platform.objects.get(pk=platform.registered.pk).control_absent_key == ABSENT_KEY

    console = login(admin_user)
    console.get("/platforms/")
    changed = console.post(
        "/platforms/controls/",
        {"platform": name, "known_absent_key": "console-absent"},
        HTTP_X_CSRFTOKEN=console.cookies["csrftoken"].value,
    )
    assert changed.status_code == 302
    stored = Platform.objects.get(pk=platform.registered.pk)
    assert (stored.control_absent_key, stored.control_present_key) == ("console-absent", "")
    assert "controls set" in console.get("/platforms/").content.decode()
    assert Client().post("/platforms/controls/", {"platform": name}).status_code == 302


def plan_unknown(agent, platform, reconciler, key, *, written=True):
    """A receipt reported unknown, for a write that did happen (the platform holds it)
    unless `written` is False."""
    if written:
        platform.seed(key)
    receipt = agent.post(
        "/api/v1/receipts",
        {
            "operation": "articles.create",
            "target": f"{platform.url}/articles",
            "intent": {"title": key},
            "idempotency_key": key,
            "reconciler": reconciler,
        },
        format="json",
    ).json()
    agent.post(f"/api/v1/receipts/{receipt['id']}/transitions", {"to": "submitted"}, format="json")
    reported = agent.post(
        f"/api/v1/receipts/{receipt['id']}/transitions",
        {"to": "outcome_unknown", "error_code": "connection_dropped"},
        format="json",
    )
    assert reported.status_code == 200, reported.json()
    return receipt["id"]


def settled(receipt_ids):
    states = set(Receipt.objects.filter(pk__in=receipt_ids).values_list("state", flat=True))
    return not states & {S.OUTCOME_UNKNOWN, S.RECONCILING}


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_verifier_answering_absent_for_everything_produces_no_safe_to_retry(
    celery_workers, platform, agent, admin_user
):
    worker = celery_workers.start()
    reconciler = http_reconciler(platform, proven_by="status_lookup")
    proving = Platform.objects.get(name=reconciler["platform"])
    platform.seed(PRESENT_KEY)
    assert (
        set_controls(
            admin_api(admin_user),
            proving.name,
            known_absent_key=ABSENT_KEY,
            known_present_key=PRESENT_KEY,
        ).json()["verifier_unhealthy_since"]
        is None
    )
    worker.wait_ready()

    # The verifier breaks: every lookup now says "never written".
    platform.answers_absent = True
    current_app.send_task("memory.platforms_check_controls", queue=celery_workers.queue)
    wait_for(lambda: Platform.objects.get(pk=proving.pk).verifier_unhealthy_since, timeout=30)
    broken = Platform.objects.get(pk=proving.pk)
    assert broken.verifier_unhealthy_reason == "known-present key answered absent"
    assert broken.controls_checked_at is not None
    assert AuditEvent.objects.filter(verb="platform.verifier_unhealthy").count() == 1

    # Effects that did happen, read through the broken verifier by the worker.
    receipt_ids = [plan_unknown(agent, platform, reconciler, f"real-{n}") for n in range(5)]
    wait_for(lambda: settled(receipt_ids), timeout=60)
    states = list(Receipt.objects.filter(pk__in=receipt_ids).values_list("state", flat=True))
    assert states.count(S.SAFE_TO_RETRY) == 0, worker.log()
    assert states == [S.MANUAL_REVIEW] * 5
    reasons = set(
        ReceiptTransition.objects.filter(
            receipt_id__in=receipt_ids, to_state=S.MANUAL_REVIEW
        ).values_list("reason", flat=True)
    )
    assert reasons == {"verifier_unhealthy"}
    assert ReviewItem.objects.filter(queue="manual_review").count() == 5

    # Repaired: the next control run passes, and a proven absence is believed again.
    platform.answers_absent = False
    current_app.send_task("memory.platforms_check_controls", queue=celery_workers.queue)
    wait_for(lambda: not Platform.objects.get(pk=proving.pk).verifier_unhealthy_since, 30)
    assert Platform.objects.get(pk=proving.pk).verifier_unhealthy_reason == ""
    assert AuditEvent.objects.filter(verb="platform.verifier_healthy").count() == 1
    found = plan_unknown(agent, platform, reconciler, "real-after")
    wait_for(lambda: settled([found]), timeout=30)
    assert Receipt.objects.get(pk=found).state == S.SUCCEEDED


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_verifier_that_breaks_between_control_runs_still_produces_no_safe_to_retry(
    celery_workers, platform, agent, admin_user
):
    # The controls passed and beat has not run since the verifier broke: the platform is
    # still marked healthy, so only the check at the moment of use stands in the way.
    worker = celery_workers.start()
    reconciler = http_reconciler(platform, proven_by="status_lookup")
    proving = Platform.objects.get(name=reconciler["platform"])
    platform.seed(PRESENT_KEY)
    set_controls(
        admin_api(admin_user),
        proving.name,
        known_absent_key=ABSENT_KEY,
        known_present_key=PRESENT_KEY,
    )
    assert platform_controls_check(platform_id=proving.pk).verdict == "passed"
    worker.wait_ready()
    platform.answers_absent = True

    receipt_ids = [plan_unknown(agent, platform, reconciler, f"real-{n}") for n in range(3)]
    never_sent = plan_unknown(agent, platform, reconciler, "never-sent", written=False)
    wait_for(lambda: settled([*receipt_ids, never_sent]), timeout=60)
    states = list(
        Receipt.objects.filter(pk__in=[*receipt_ids, never_sent]).values_list("state", flat=True)
    )
    # Not even the write that never happened is believed absent: its verifier cannot be.
    assert states == [S.MANUAL_REVIEW] * 4, worker.log()
    reasons = set(
        ReceiptTransition.objects.filter(
            receipt_id__in=receipt_ids, to_state=S.MANUAL_REVIEW
        ).values_list("reason", flat=True)
    )
    assert reasons == {"verifier_unhealthy"}
    assert Platform.objects.get(pk=proving.pk).verifier_unhealthy_since is None  # beat's job

    # Repaired, the same check lets a proven absence through again.
    platform.answers_absent = False
    absent = plan_unknown(agent, platform, reconciler, "never-sent-2", written=False)
    wait_for(lambda: settled([absent]), timeout=30)
    assert Receipt.objects.get(pk=absent).state == S.SAFE_TO_RETRY, worker.log()


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_healthy_verifier_still_proves_absence(celery_workers, platform, agent, admin_user):
    worker = celery_workers.start()
    reconciler = http_reconciler(platform, proven_by="status_lookup")
    name = reconciler["platform"]
    platform.seed(PRESENT_KEY)
    set_controls(
        admin_api(admin_user), name, known_absent_key=ABSENT_KEY, known_present_key=PRESENT_KEY
    )
    worker.wait_ready()
    current_app.send_task("memory.platforms_check_controls", queue=celery_workers.queue)
    wait_for(lambda: Platform.objects.get(name=name).controls_checked_at is not None, timeout=30)
    assert Platform.objects.get(name=name).verifier_unhealthy_since is None

    receipt_id = plan_unknown(agent, platform, reconciler, "never-sent", written=False)
    wait_for(lambda: settled([receipt_id]), timeout=30)
    assert Receipt.objects.get(pk=receipt_id).state == S.SAFE_TO_RETRY, worker.log()


@pytest.mark.django_db
def test_a_found_absent_key_fails_and_an_unanswered_read_changes_nothing(platform, admin_user):
    reconciler = http_reconciler(platform, proven_by="search_by_key")
    name = reconciler["platform"]
    set_controls(admin_api(admin_user), name, known_absent_key=ABSENT_KEY)
    proving = Platform.objects.get(name=name)

    platform.seed(ABSENT_KEY)  # the platform now claims a key nobody ever wrote
    run = platform_controls_check(platform_id=proving.pk)
    assert (run.verdict, run.reason) == ("failed", "known-absent key answered present")
    since = Platform.objects.get(pk=proving.pk).verifier_unhealthy_since
    assert since is not None

    # Unanswered reads prove nothing either way: the platform stays unhealthy.
    platform.articles.pop(ABSENT_KEY)
    platform.failing_reads = 1
    assert platform_controls_check(platform_id=proving.pk).verdict == "inconclusive"
    assert Platform.objects.get(pk=proving.pk).verifier_unhealthy_since == since

    assert platform_controls_check(platform_id=proving.pk).verdict == "passed"
    healed = Platform.objects.get(pk=proving.pk)
    assert (healed.verifier_unhealthy_since, healed.verifier_unhealthy_reason) == (None, "")
    verbs = AuditEvent.objects.filter(verb__startswith="platform.verifier").order_by("id")
    assert [event.verb for event in verbs] == [
        "platform.verifier_unhealthy",
        "platform.verifier_healthy",
    ]
