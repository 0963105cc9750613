"""Concurrent writers on one identity, through the real server."""

from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from django.utils import timezone

from accounts.actors import Actor
from accounts.services import agent_token_create
from memory.models import Claim, ClaimSource
from memory.services.events import event_record
from tests.memory.helpers import candidate

pytestmark = pytest.mark.django_db(transaction=True)


def _post_all(live_server, secret: str, bodies: list[dict]) -> list[httpx.Response]:
    def send(body: dict) -> httpx.Response:
        return httpx.post(
            f"{live_server.url}/api/v1/claims",
            json=body,
            headers={"Authorization": f"Bearer {secret}"},
            timeout=60,
        )

    with ThreadPoolExecutor(max_workers=10) as pool:
        return list(pool.map(send, bodies))


def _token_and_event(acme, *, max_authority: str, kind: str):
    issued = agent_token_create(tenant=acme, name="racer", max_authority=max_authority)
    event = event_record(
        tenant=acme,
        actor=Actor.for_token(issued.token),
        subject_key="user:alice",
        kind=kind,
        observed_at=timezone.now(),
    )
    return issued.secret, str(event.pk)


def test_twenty_different_values_leave_exactly_one_active(live_server, acme):
    secret, tool_result = _token_and_event(acme, max_authority="tool_verified", kind="tool_result")
    bodies = [
        candidate(
            tool_result,
            value=f"city-{n}",
            text=f"Alice lives in city {n}",
            authority="tool_verified",
            available_at="2026-11-01T00:00:00Z",
        )
        for n in range(20)
    ]
    responses = _post_all(live_server, secret, bodies)
    assert all(r.status_code == 201 for r in responses), [r.text for r in responses]
    statuses = list(Claim.objects.values_list("status", flat=True))
    assert len(statuses) == 20
    assert statuses.count("active") == 1
    assert set(statuses) <= {"active", "conflicted", "superseded"}


def test_twenty_identical_submissions_leave_one_claim_with_merged_evidence(live_server, acme):
    secret, said = _token_and_event(acme, max_authority="user_explicit", kind="user_statement")
    bodies = [
        candidate(basis="reported", sources=[{"event": said}, {"uri": f"chat://s/{n}"}])
        for n in range(20)
    ]
    responses = _post_all(live_server, secret, bodies)
    decisions = sorted(r.json()["decision"] for r in responses)
    assert decisions.count("accepted") == 1
    assert decisions.count("merged") == 19
    claim = Claim.objects.get()
    assert claim.status == "active"
    # The user's statement once, and each submission's own uri.
    assert ClaimSource.objects.filter(claim=claim).count() == 21
