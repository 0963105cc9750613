"""The verdicts memory's queues carry out, decided in the console as an editor does.

Each test checks what the verdict did to the claims (or the deletion), the
audit rows it wrote and the review item it closed, with its decision row.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from accounts.models import AuditEvent
from memory.claims.models import Claim, ClaimSource, ClaimStatus
from memory.privacy.models import DeletionRequest, DeletionStatus
from memory.privacy.services.consolidation import consolidation_run
from memory.privacy.tasks import deletion_run_task
from reviews.models import Decision, ItemStatus, Queue, ReviewItem
from tests.memory.helpers import recall, submit

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def desk(editor, login):
    """The editor's console client, with its CSRF token."""
    client = login(editor)
    client.get("/review/candidates/")
    client.csrf = client.cookies["csrftoken"].value
    return client


def decide(desk, item: ReviewItem, **form: Any) -> None:
    response = desk.post(
        f"/review/{item.queue}/{item.pk}/decide", form, HTTP_X_CSRFTOKEN=desk.csrf, **HTMX
    )
    assert response.status_code == 200
    assert "decision_error" not in response.content.decode(), response.content.decode()


def statuses(*claims: dict[str, Any]) -> list[str]:
    return [Claim.objects.get(pk=claim["id"]).status for claim in claims]


def audit_verbs(claim: dict[str, Any]) -> list[tuple[str, str]]:
    """The claim's own moves the editor's verdict made (the review row is checked apart)."""
    rows = AuditEvent.objects.filter(
        target_type="claim", target_id=claim["id"], verb__startswith="claim.", actor_label="erin"
    ).order_by("id")
    return [(row.verb, row.actor_label) for row in rows]


def assert_decided(item: ReviewItem, verdict: str, *, payload: dict[str, Any] | None = None):
    item.refresh_from_db()
    assert (item.status, item.lease_expires_at) == (ItemStatus.DECIDED, None)
    assert item.decided_at is not None
    decision = Decision.objects.get(item=item)
    assert (decision.verdict, decision.actor_label) == (verdict, "erin")
    if payload is not None:
        assert decision.payload == payload
    review_audit = AuditEvent.objects.get(verb=f"review.{verdict}", target_id=item.target_id)
    assert review_audit.data == {"review_item": item.pk, "queue": item.queue}


@pytest.fixture
def conflict(agent):
    """A verified Beijing against an inferred Shanghai: the inference waits as a conflict."""
    verified = submit(agent, authority="tool_verified", value="Beijing", text="in Beijing")
    inferred = submit(agent, authority="agent_inferred", basis="inference")
    item = ReviewItem.objects.get(pk=inferred["review_item"]["id"])
    assert item.queue == Queue.CONFLICTS
    return verified, inferred, item


# --- candidates ---------------------------------------------------------------------------------


def test_merge_folds_the_candidates_evidence_into_the_active_claim(agent, desk):
    active = submit(agent)
    # The same fact under another predicate: the gate cannot tell, a person can.
    duplicate = submit(
        agent,
        authority="reported",
        basis="reported",
        predicate="based_in",
        text="Alice is based in Shanghai",
        sources=[{"uri": "crm://contacts/alice"}],
    )
    item = ReviewItem.objects.get(pk=duplicate["review_item"]["id"])
    assert item.queue == Queue.CANDIDATES

    decide(desk, item, verdict="merge", winner=active["id"])

    assert statuses(active, duplicate) == [ClaimStatus.ACTIVE, ClaimStatus.REJECTED]
    uris = set(ClaimSource.objects.filter(claim_id=active["id"]).values_list("uri", flat=True))
    assert "crm://contacts/alice" in uris
    assert audit_verbs(duplicate) == [("claim.rejected", "erin")]
    assert audit_verbs(active) == []
    assert_decided(item, "merge", payload={"winner": active["id"]})


def test_merge_into_a_claim_that_is_not_active_changes_nothing(agent, desk):
    first = submit(agent, authority="reported", basis="reported", text="reported once")
    second = submit(agent, authority="reported", basis="reported", predicate="employer")
    item = ReviewItem.objects.get(pk=second["review_item"]["id"])
    response = desk.post(
        f"/review/candidates/{item.pk}/decide",
        {"verdict": "merge", "winner": first["id"]},
        HTTP_X_CSRFTOKEN=desk.csrf,
        **HTMX,
    )
    assert "Merge only into an active claim." in response.content.decode()
    assert statuses(first, second) == [ClaimStatus.CANDIDATE, ClaimStatus.CANDIDATE]
    item.refresh_from_db()
    assert item.status in (ItemStatus.OPEN, ItemStatus.CLAIMED)
    assert not Decision.objects.filter(item=item).exists()


# --- conflicts ----------------------------------------------------------------------------------


def test_keep_both_narrows_each_side_and_keeps_both_active(desk, conflict):
    verified, inferred, item = conflict

    decide(
        desk,
        item,
        verdict="keep_both",
        **{f"scope_{verified['id']}": "place=office", f"scope_{inferred['id']}": "place=home"},
    )

    assert statuses(verified, inferred) == [ClaimStatus.ACTIVE, ClaimStatus.ACTIVE]
    scopes = {
        str(c.pk): c.scope for c in Claim.objects.filter(pk__in=[verified["id"], inferred["id"]])
    }
    assert scopes == {verified["id"]: {"place": "office"}, inferred["id"]: {"place": "home"}}
    assert ("claim.active", "erin") in audit_verbs(verified)
    assert ("claim.active", "erin") in audit_verbs(inferred)
    assert_decided(
        item,
        "keep_both",
        payload={
            "scopes": {verified["id"]: {"place": "office"}, inferred["id"]: {"place": "home"}}
        },
    )


def test_keep_both_without_a_narrower_scope_changes_nothing(desk, conflict):
    verified, inferred, item = conflict
    before = statuses(verified, inferred)
    response = desk.post(
        f"/review/conflicts/{item.pk}/decide",
        {"verdict": "keep_both"},
        HTTP_X_CSRFTOKEN=desk.csrf,
        **HTMX,
    )
    assert "narrower scope" in response.content.decode()
    assert statuses(verified, inferred) == before
    assert not Decision.objects.filter(item=item).exists()


def test_reject_one_side_leaves_the_other_standing(desk, conflict):
    verified, inferred, item = conflict

    decide(desk, item, verdict="reject", loser=inferred["id"], reason_code="unsupported")

    assert statuses(verified, inferred) == [ClaimStatus.ACTIVE, ClaimStatus.REJECTED]
    assert audit_verbs(inferred) == [("claim.rejected", "erin")]
    rejected = AuditEvent.objects.get(verb="claim.rejected", target_id=inferred["id"])
    assert rejected.reason == "unsupported"
    assert_decided(item, "reject", payload={"loser": inferred["id"]})
    assert Decision.objects.get(item=item).reason_code == "unsupported"


def test_reject_can_name_the_older_side_as_the_loser(desk, conflict):
    verified, inferred, item = conflict

    decide(desk, item, verdict="reject", loser=verified["id"], reason_code="outdated")

    assert statuses(verified, inferred) == [ClaimStatus.REJECTED, ClaimStatus.ACTIVE]
    assert ("claim.rejected", "erin") in audit_verbs(verified)
    assert ("claim.active", "erin") in audit_verbs(inferred)
    assert_decided(item, "reject", payload={"loser": verified["id"]})


# --- stale --------------------------------------------------------------------------------------


@pytest.fixture
def stale(agent, acme, settings):
    """An active claim past its refresh date that recalls keep asking for."""
    claim = submit(agent, refresh_after=(timezone.now() - timedelta(days=1)).isoformat())
    for _ in range(settings.STALE_ASK_THRESHOLD):
        assert recall(agent, query="where does alice live", include_stale=True)["items"]
    consolidation_run(tenant=acme)
    item = ReviewItem.objects.get(queue=Queue.STALE, target_id=claim["id"])
    return claim, item


def test_refresh_makes_a_stale_claim_a_fact_again_until_the_new_date(agent, desk, stale):
    claim, item = stale
    refresh_after = (timezone.now() + timedelta(days=90)).replace(microsecond=0)
    payload = {"refresh_after": refresh_after.isoformat()}

    decide(desk, item, verdict="refresh", payload_json=json.dumps(payload))

    stored = Claim.objects.get(pk=claim["id"])
    assert (stored.status, stored.refresh_after) == (ClaimStatus.ACTIVE, refresh_after)
    refreshed = AuditEvent.objects.get(verb="claim.refreshed", target_id=claim["id"])
    assert (refreshed.actor_label, refreshed.data) == ("erin", payload)
    assert_decided(item, "refresh", payload=payload)
    # No longer stale: an ordinary recall returns it again.
    assert [i["id"] for i in recall(agent, query="where does alice live")["items"]] == [claim["id"]]


def test_invalidate_needs_a_reason_and_retires_the_stale_claim(agent, desk, stale):
    claim, item = stale
    refused = desk.post(
        f"/review/stale/{item.pk}/decide",
        {"verdict": "invalidate"},
        HTTP_X_CSRFTOKEN=desk.csrf,
        **HTMX,
    )
    assert "a rejection needs a reason code" in refused.content.decode()
    assert statuses(claim) == [ClaimStatus.ACTIVE]

    decide(desk, item, verdict="invalidate", reason_code="outdated")

    assert statuses(claim) == [ClaimStatus.INVALIDATED]
    invalidated = AuditEvent.objects.get(verb="claim.invalidated", target_id=claim["id"])
    assert (invalidated.actor_label, invalidated.reason) == ("erin", "outdated")
    assert_decided(item, "invalidate", payload={})
    result = recall(agent, query="where does alice live", include_stale=True)
    assert result["items"] == []


# --- deletions ----------------------------------------------------------------------------------


@pytest.fixture
def failed_deletion(alice, login, agent, settings):
    """Alice asks to forget a memory; the worker finds the request out of attempts."""
    claim = submit(agent)
    client = login(alice)
    client.get("/me/")
    started = client.post(
        f"/me/memories/{claim['id']}/delete", HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value
    )
    assert started.status_code == 302
    deletion = DeletionRequest.objects.get()
    settings.DELETION_MAX_ATTEMPTS = 0
    deletion_run_task(str(deletion.pk))
    deletion.refresh_from_db()
    assert (deletion.status, deletion.error_code) == (DeletionStatus.FAILED, "attempts_exhausted")
    item = ReviewItem.objects.get(queue=Queue.DELETIONS, target_id=str(deletion.pk))
    return claim, deletion, item


def test_retry_asks_again_for_a_failed_deletion(desk, failed_deletion, settings):
    claim, deletion, item = failed_deletion

    decide(desk, item, verdict="acknowledge", payload_json='{"retry": true}')

    retry = DeletionRequest.objects.exclude(pk=deletion.pk).get()
    assert (retry.status, retry.claim_id, retry.subject_id) == (
        DeletionStatus.PENDING,
        deletion.claim_id,
        deletion.subject_id,
    )
    assert retry.requested_by_id == deletion.requested_by_id
    deletion.refresh_from_db()
    assert deletion.status == DeletionStatus.FAILED  # the failed request and its report stay
    requested = AuditEvent.objects.filter(target_type="deletion", target_id=str(retry.pk))
    assert [(a.verb, a.actor_label) for a in requested][:1] == [("deletion.requested", "erin")]
    assert_decided(item, "acknowledge", payload={"retry": True})

    settings.DELETION_MAX_ATTEMPTS = 5
    deletion_run_task(str(retry.pk))
    retry.refresh_from_db()
    assert retry.status == DeletionStatus.COMPLETED and retry.report["clean"]
    assert statuses(claim) == [ClaimStatus.ERASED]


def test_acknowledge_without_retry_only_records_that_someone_looked(desk, failed_deletion):
    _claim, deletion, item = failed_deletion

    decide(desk, item, verdict="acknowledge")

    assert list(DeletionRequest.objects.values_list("pk", flat=True)) == [deletion.pk]
    deletion.refresh_from_db()
    assert deletion.status == DeletionStatus.FAILED
    assert_decided(item, "acknowledge", payload={})


# --- each queue's own decision payload, the same for the console and the API ---------------------


def test_the_api_refresh_keeps_the_new_refresh_date(agent, stale, session_api, editor):
    # Before each queue declared its payload, the API dropped `refresh_after` and the
    # refresh cleared the claim's date.
    claim, item = stale
    refresh_after = (timezone.now() + timedelta(days=30)).replace(microsecond=0)
    response = session_api(editor).post(
        f"/api/v1/reviews/{item.pk}/decide",
        {"verdict": "refresh", "refresh_after": refresh_after.isoformat()},
        format="json",
    )
    assert response.status_code == 200, response.json()
    assert response.json()["payload"] == {"refresh_after": refresh_after.isoformat()}
    assert Claim.objects.get(pk=claim["id"]).refresh_after == refresh_after


def test_the_console_refresh_date_field_reaches_the_claim(desk, stale):
    claim, item = stale
    when = (timezone.localtime() + timedelta(days=10)).replace(second=0, microsecond=0)

    decide(desk, item, verdict="refresh", refresh_after=when.strftime("%Y-%m-%dT%H:%M"))

    assert Claim.objects.get(pk=claim["id"]).refresh_after == when


@pytest.mark.parametrize("value", ["next tuesday", "2001-01-01T00:00:00Z"])
def test_a_refresh_date_that_is_no_date_or_past_changes_nothing(stale, session_api, editor, value):
    claim, item = stale
    before = Claim.objects.get(pk=claim["id"]).refresh_after
    response = session_api(editor).post(
        f"/api/v1/reviews/{item.pk}/decide",
        {"verdict": "refresh", "refresh_after": value},
        format="json",
    )
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "validation_error" and "refresh_after" in body["errors"]
    assert Claim.objects.get(pk=claim["id"]).refresh_after == before
    assert not Decision.objects.filter(item=item).exists()


def test_the_api_retries_a_failed_deletion(failed_deletion, session_api, editor):
    # `retry` was silently dropped by the API: a failed deletion could never run again.
    _claim, deletion, item = failed_deletion
    response = session_api(editor).post(
        f"/api/v1/reviews/{item.pk}/decide",
        {"verdict": "acknowledge", "retry": True},
        format="json",
    )
    assert response.status_code == 200, response.json()
    retry = DeletionRequest.objects.exclude(pk=deletion.pk).get()
    assert (retry.status, retry.claim_id) == (DeletionStatus.PENDING, deletion.claim_id)
    assert_decided(item, "acknowledge", payload={"retry": True})


def test_the_console_retry_box_runs_a_failed_deletion_again(desk, failed_deletion):
    _claim, deletion, item = failed_deletion
    page = desk.get(f"/review/deletions/{item.pk}/", **HTMX).content.decode()
    assert 'name="retry"' in page and "The deletion failed" in page

    decide(desk, item, verdict="acknowledge", retry="true")

    assert DeletionRequest.objects.exclude(pk=deletion.pk).get().status == DeletionStatus.PENDING


def test_the_queues_endpoint_lists_each_queues_vocabulary(session_api, editor):
    response = session_api(editor).get("/api/v1/reviews/queues")
    assert response.status_code == 200
    queues = {row["queue"]: row for row in response.json()}
    assert "refresh_after" in queues["stale"]["payload_fields"]
    assert "retry" in queues["deletions"]["payload_fields"]
    manual = queues["manual_review"]
    assert manual["note_is_reason"] is True
    assert all(v["needs_reason"] for v in manual["verdicts"])
    codes = {r["code"] for r in manual["reason_codes"]}
    assert "not_found" in codes and "injection" not in codes
    assert "injection" in {r["code"] for r in queues["candidates"]["reason_codes"]}
    labels = {v["verdict"]: v["label"] for v in queues["conflicts"]["verdicts"]}
    assert labels["keep_both"] == "Keep both, narrower"


def test_a_reason_from_another_queues_vocabulary_is_refused(failed_deletion, session_api, editor):
    _claim, _deletion, item = failed_deletion
    response = session_api(editor).post(
        f"/api/v1/reviews/{item.pk}/decide",
        {"verdict": "acknowledge", "reason_code": "injection"},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_reason_code"
    assert "false_positive" in response.json()["allowed"]
    assert not Decision.objects.filter(item=item).exists()


# --- conflicts as the editor sees them ----------------------------------------------------------


def test_the_conflict_form_preselects_the_rules_winner_and_says_why(desk, conflict):
    verified, inferred, item = conflict
    page = desk.get(f"/review/conflicts/{item.pk}/", **HTMX).content.decode()
    stronger = max(
        Claim.objects.filter(pk__in=[verified["id"], inferred["id"]]),
        key=lambda c: {"user_explicit": 4, "tool_verified": 3, "agent_inferred": 2}.get(
            c.authority, 1
        ),
    )
    assert f'name="winner" value="{stronger.pk}" checked' in page
    assert 'id="suggestion"' in page and "the rule keeps the better-evidenced claim" in page
    # Buttons say what they do, not the verdict's raw value.
    assert "Keep both, narrower" in page and "Keep_both" not in page
    assert "Safe_to_retry" not in page


def test_superseding_says_which_side_won(desk, conflict):
    verified, _inferred, item = conflict
    response = desk.post(
        f"/review/conflicts/{item.pk}/decide",
        {"verdict": "supersede", "winner": verified["id"]},
        HTTP_X_CSRFTOKEN=desk.csrf,
        **HTMX,
    )
    assert "Kept “in Beijing”; the other side is superseded." in response.content.decode()
