"""Consolidation: expiry, staleness, duplicates, hidden conflicts, lineage, idempotence."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db.models import Max
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import AuditEvent, Role
from memory.claims.models import Claim, ClaimSource, ClaimStatus, Event, RecallTrace, Subject
from memory.privacy.models import ConsolidationRun, Tombstone
from memory.privacy.services.consolidation import consolidation_run
from memory.privacy.services.deletion import deletion_request_create, deletion_run
from memory.privacy.tasks import consolidate
from reviews.models import Queue, ReviewItem
from reviews.services import review_decide
from tests.memory.helpers import evidence, recall, submit

pytestmark = pytest.mark.django_db

SYSTEM = Actor.system("test")


def hot_memory(agent, subject: str = "user:alice") -> dict:
    return agent.get(f"/api/v1/subjects/{subject}/hot-memory?budget_chars=4000").json()


def derive(agent, parent_id: str, **body) -> dict:
    payload = {
        "subject": "user:alice",
        "kind": "fact",
        "authority": "tool_verified",
        "basis": "verified",
        **body,
    }
    response = agent.post(f"/api/v1/claims/{parent_id}/derive", payload, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def status_of(claim: dict) -> str:
    return Claim.objects.get(pk=claim["id"]).status


def open_items(queue: str) -> list[ReviewItem]:
    return list(ReviewItem.objects.filter(queue=queue, status__in=["open", "claimed"]))


def test_expired_claims_are_invalidated_with_what_was_derived_and_hot_memory_rebuilt(agent, acme):
    past = (timezone.now() - timedelta(minutes=1)).isoformat()
    visa = submit(agent, predicate="visa", value="tourist", text="Alice holds a tourist visa")
    Claim.objects.filter(pk=visa["id"]).update(expires_at=past)
    derived = derive(
        agent, visa["id"], predicate="may_work", value=False, text="Alice may not work locally"
    )
    kept = submit(agent, predicate="drink", value="tea", text="Alice drinks tea")
    stale_block = hot_memory(agent)
    assert "tourist visa" not in stale_block["text"]  # recall and hot memory already skip it

    run = consolidation_run(tenant=acme)

    assert status_of(visa) == ClaimStatus.INVALIDATED
    assert status_of(derived) == ClaimStatus.INVALIDATED
    assert status_of(kept) == ClaimStatus.ACTIVE
    assert run.changes["counts"]["expired"] == 1
    assert run.changes["counts"]["derived_invalidated"] == 1
    assert run.changes["hot_memory"]["blocks_rebuilt"] == 1
    assert "may not work" not in hot_memory(agent)["text"]
    assert AuditEvent.objects.filter(verb="claims.expired").count() == 1
    # Each claim the set-wise statements moved has its own row, as `claim_move` writes.
    moves = {
        event.target_id: (event.reason, event.data)
        for event in AuditEvent.objects.filter(verb="claim.invalidated")
    }
    assert moves == {
        visa["id"]: ("expired", {"from": "active", "by": "worker"}),
        derived["id"]: ("source_changed", {"from": "active", "by": "worker"}),
    }

    again = consolidation_run(tenant=acme)
    assert again.changed == 0
    assert again.changes["hot_memory"] == {"keys_purged": 0, "blocks_rebuilt": 0}


def test_a_stale_claim_recalls_keep_asking_for_goes_to_the_stale_queue(agent, acme):
    claim = submit(
        agent,
        refresh_after=(timezone.now() - timedelta(days=1)).isoformat(),
    )
    ordinary = recall(agent, query="where does alice live")
    assert ordinary["items"] == [] and ordinary["excluded"]["stale"] == 1
    for _ in range(settings.STALE_ASK_THRESHOLD - 1):
        assert recall(agent, query="where does alice live", include_stale=True)["items"]
    assert consolidation_run(tenant=acme).changes["counts"]["stale_flagged"] == 0

    asked = recall(agent, query="where does alice live", include_stale=True)
    assert asked["items"][0]["stale"] is True
    run = consolidation_run(tenant=acme)

    assert run.changes["counts"]["stale_flagged"] == 1
    (item,) = open_items(Queue.STALE)
    assert item.target_id == claim["id"] and item.reason_codes == ["stale_in_demand"]
    assert consolidation_run(tenant=acme).changed == 0


def test_duplicate_candidates_fold_into_the_oldest_with_their_evidence(agent, acme):
    first = submit(agent, authority="agent_inferred", basis="inference")
    second = submit(
        agent, authority="reported", basis="reported", sources=[{"uri": "crm://contacts/alice"}]
    )
    assert {status_of(first), status_of(second)} == {ClaimStatus.CANDIDATE}

    run = consolidation_run(tenant=acme)

    assert run.changes["counts"]["duplicates_merged"] == 1
    assert status_of(first) == ClaimStatus.CANDIDATE
    assert status_of(second) == ClaimStatus.REJECTED
    uris = set(ClaimSource.objects.filter(claim_id=first["id"]).values_list("uri", flat=True))
    assert {"chat://s1/m7", "crm://contacts/alice"} <= uris
    assert [i.target_id for i in open_items(Queue.CANDIDATES)] == [first["id"]]
    assert consolidation_run(tenant=acme).changed == 0


def test_a_candidate_repeating_the_active_claim_folds_into_it(agent, acme):
    early = submit(agent, authority="reported", basis="reported")
    active = submit(
        agent,
        authority="tool_verified",
        sources=[*evidence(agent, "tool_verified"), {"uri": "gov://registry/alice"}],
    )
    assert status_of(active) == ClaimStatus.ACTIVE

    run = consolidation_run(tenant=acme)

    assert run.changes["counts"]["duplicates_merged"] == 1
    assert status_of(early) == ClaimStatus.REJECTED
    assert "chat://s1/m7" in ClaimSource.objects.filter(claim_id=active["id"]).values_list(
        "uri", flat=True
    )
    assert open_items(Queue.CANDIDATES) == []


def test_rival_candidates_become_one_conflict_instead_of_an_approval_race(agent, acme, editor):
    beijing = submit(
        agent, authority="reported", basis="reported", value="Beijing", text="Lives in Beijing"
    )
    shanghai = submit(agent, authority="agent_inferred", basis="inference")

    run = consolidation_run(tenant=acme)

    assert run.changes["counts"]["conflicts_detected"] == 2
    assert {status_of(beijing), status_of(shanghai)} == {ClaimStatus.CONFLICTED}
    assert open_items(Queue.CANDIDATES) == []
    (item,) = open_items(Queue.CONFLICTS)
    assert item.target_id == shanghai["id"]
    # Unverified sides are not settled automatically; the editor's verdict works as usual.
    assert consolidation_run(tenant=acme).changed == 0
    review_decide(
        tenant=acme,
        item_id=item.pk,
        actor=Actor.for_user(editor, Role.EDITOR),
        verdict="supersede",
        payload={"winner": beijing["id"]},
    )
    assert status_of(beijing) == ClaimStatus.ACTIVE
    assert status_of(shanghai) == ClaimStatus.SUPERSEDED


def test_a_candidate_contradicting_a_later_active_claim_becomes_a_conflict(agent, acme):
    candidate = submit(agent, authority="reported", basis="reported", value="Beijing")
    active = submit(agent, authority="tool_verified")

    consolidation_run(tenant=acme)

    assert status_of(candidate) == ClaimStatus.CONFLICTED
    assert status_of(active) == ClaimStatus.ACTIVE  # a weak side never knocks a fact out
    assert Claim.objects.get(pk=active["id"]).conflicts_with == [
        Claim.objects.get(pk=candidate["id"]).pk
    ]
    (item,) = open_items(Queue.CONFLICTS)
    assert item.target_id == candidate["id"]
    assert "detected_by_consolidation" in item.reason_codes


@pytest.mark.parametrize("arrival", ["older_first", "newer_first"])
def test_two_tools_are_settled_by_observation_time_never_by_arrival_order(agent, acme, arrival):
    now = timezone.now()
    catalog = {
        "subject": "server:web-1",
        "predicate": "owner_team",
        "value": "team-a",
        "text": "The asset catalog lists team A as owner of web-1",
        "authority": "tool_verified",
        "available_at": (now - timedelta(days=3)).isoformat(),
        "sources": [{"uri": "cmdb://assets/web-1"}],
    }
    cloud = {
        **catalog,
        "value": "team-b",
        "text": "The cloud API shows web-1 transferred to team B",
        "available_at": (now - timedelta(hours=1)).isoformat(),
        "sources": [{"uri": "cloud://projects/web-1"}],
    }
    order = [catalog, cloud] if arrival == "older_first" else [cloud, catalog]
    verdicts = [
        submit(
            agent,
            **{
                **body,
                "sources": [
                    *evidence(agent, "tool_verified", subject=body["subject"]),
                    *body["sources"],
                ],
            },
        )
        for body in order
    ]

    consolidation_run(tenant=acme)

    answer = recall(agent, subject="server:web-1")
    assert [item["value"] for item in answer["items"]] == ["team-b"]
    assert {Claim.objects.get(pk=v["id"]).status for v in verdicts} == {
        ClaimStatus.ACTIVE,
        ClaimStatus.SUPERSEDED,
    }
    assert open_items(Queue.CONFLICTS) == []
    # Both observations stay as evidence: the older is history, not deleted.
    assert Claim.objects.filter(subject__ref="web-1").count() == 2


def test_equal_authority_and_equal_time_stay_conflicted_for_an_editor(agent, acme):
    seen = timezone.now() - timedelta(hours=2)
    base = {
        "subject": "server:web-2",
        "predicate": "owner_team",
        "authority": "tool_verified",
        "available_at": seen.isoformat(),
    }
    submit(agent, **base, value="team-a", text="Team A", sources=[{"uri": "cmdb://a"}])
    submit(agent, **base, value="team-b", text="Team B", sources=[{"uri": "cloud://b"}])

    assert consolidation_run(tenant=acme).changes["counts"]["conflicts_settled"] == 0
    assert len(open_items(Queue.CONFLICTS)) == 1


def test_authority_settles_a_tool_report_contradicting_the_user(agent, acme):
    user_said = submit(agent, value="Shanghai")
    tool_said = submit(agent, authority="tool_verified", value="Hangzhou", text="Hangzhou")
    assert status_of(tool_said) == ClaimStatus.CONFLICTED

    run = consolidation_run(tenant=acme)

    assert run.changes["counts"]["conflicts_settled"] == 2
    assert status_of(user_said) == ClaimStatus.ACTIVE
    assert status_of(tool_said) == ClaimStatus.SUPERSEDED
    assert Claim.objects.get(pk=user_said["id"]).conflicts_with == []
    assert AuditEvent.objects.filter(reason="settled_by_authority").exists()


def _snapshot() -> dict:
    return {
        "claims": sorted(
            Claim.objects.values_list("id", "status", "updated_at", "text", "conflicts_with")
        ),
        "sources": ClaimSource.objects.count(),
        "events": sorted(Event.objects.values_list("id", "redacted_at")),
        "traces": sorted(RecallTrace.objects.values_list("id", "redacted_at")),
        "reviews": sorted(ReviewItem.objects.values_list("id", "status")),
        "audit": AuditEvent.objects.count(),
        "tombstones": Tombstone.objects.count(),
    }


def test_consolidation_after_a_deletion_refers_to_no_tombstoned_id_and_reruns_change_nothing(
    agent, acme
):
    # A memory to forget that is also on one side of a conflict, has a derivation, a
    # duplicate candidate, a recall history and an expiry; plus ordinary work elsewhere.
    secret = submit(agent, predicate="pin_hint", value="grandma", text="PIN hint: grandma")
    conflicting = submit(
        agent, predicate="pin_hint", authority="tool_verified", value="dog", text="Hint: dog"
    )
    derive(agent, secret["id"], predicate="pin_family", value=True, text="The PIN is family")
    submit(agent, predicate="pin_hint", authority="reported", basis="reported", value="grandma")
    recall(agent, query="grandma", include_stale=True)
    Claim.objects.filter(pk=secret["id"]).update(expires_at=timezone.now() - timedelta(days=1))
    expiring = submit(agent, predicate="visa", value="tourist", text="Tourist visa")
    Claim.objects.filter(pk=expiring["id"]).update(expires_at=timezone.now())
    rivals = [
        submit(agent, predicate="pet", authority="reported", basis="reported", value=v)
        for v in ("cat", "hamster")
    ]
    subject = Subject.objects.get(tenant=acme, kind="user", ref="alice")
    deletion, _ = deletion_request_create(
        tenant=acme, actor=SYSTEM, subject=subject, claim=Claim.objects.get(pk=secret["id"])
    )
    assert deletion_run(deletion_id=deletion.pk, worker=SYSTEM).report["clean"]
    tombstoned = {str(t) for t in Tombstone.objects.values_list("target_id", flat=True)}
    assert secret["id"] in tombstoned
    marks = {
        "audit": AuditEvent.objects.aggregate(m=Max("id"))["m"],
        "reviews": ReviewItem.objects.aggregate(m=Max("id"))["m"],
        "sources": ClaimSource.objects.aggregate(m=Max("id"))["m"],
    }

    run = consolidation_run(tenant=acme)

    assert run.changes["counts"]["expired"] == 1  # the visa; the erased claim is not touched
    assert run.changes["counts"]["conflicts_detected"] == 2  # the rival pets
    assert status_of(expiring) == ClaimStatus.INVALIDATED
    assert {status_of(r) for r in rivals} == {ClaimStatus.CONFLICTED}
    assert status_of(conflicting) == ClaimStatus.CONFLICTED  # its other side is gone
    created = [
        json.dumps(run.changes),
        *(
            json.dumps([a.target_id, a.reason, a.data])
            for a in AuditEvent.objects.filter(id__gt=marks["audit"])
        ),
        *(
            json.dumps([r.target_id, r.reason_codes, r.target_version])
            for r in ReviewItem.objects.filter(id__gt=marks["reviews"])
        ),
        *(
            json.dumps([str(s.claim_id), str(s.event_id)])
            for s in ClaimSource.objects.filter(id__gt=marks["sources"])
        ),
    ]
    assert len(created) > 1
    for row in created:
        assert not any(t in row for t in tombstoned), row
    erased = Claim.objects.get(pk=secret["id"])
    assert (erased.status, erased.text, erased.value) == (ClaimStatus.ERASED, "", None)

    before = _snapshot()
    again = consolidation_run(tenant=acme)
    assert again.changed == 0, again.changes
    assert _snapshot() == before


def test_consolidate_command_and_task_run_one_pass(agent, acme, globex):
    visa = submit(agent, predicate="visa", value="tourist", text="Tourist visa")
    Claim.objects.filter(pk=visa["id"]).update(expires_at=timezone.now())
    out = StringIO()

    call_command("consolidate", "--tenant", "acme", stdout=out)

    (line,) = out.getvalue().splitlines()
    assert json.loads(line)["tenant"] == "acme" and json.loads(line)["expired"] == 1
    assert status_of(visa) == ClaimStatus.INVALIDATED
    assert consolidate.apply(kwargs={"tenant_id": acme.pk}).get()[str(acme.pk)]["expired"] == 0
    consolidate.apply().get()
    assert set(ConsolidationRun.objects.values_list("tenant__slug", flat=True)) == {
        "acme",
        "globex",
    }
    assert "memory-consolidate" in settings.CELERY_BEAT_SCHEDULE
    assert "memory-deletions-dispatch-due" in settings.CELERY_BEAT_SCHEDULE


def test_lifecycle_metrics_are_exposed(client, agent, acme):
    submit(agent, refresh_after=(timezone.now() - timedelta(days=1)).isoformat())
    recall(agent, include_stale=True)
    consolidation_run(tenant=acme)
    body = client.get("/metrics").content.decode()
    assert 'memdesk_deletions{status="completed"} 0.0' in body
    assert "memdesk_deletion_completion_seconds_count 0.0" in body
    assert "memdesk_stale_claim_use_rate 1.0" in body
    assert f'memdesk_consolidation_last_run_timestamp_seconds{{tenant="{acme.pk}"}}' in body
