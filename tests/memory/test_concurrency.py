"""Concurrent writers on one identity, through the real server."""

from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from django.utils import timezone

from accounts.actors import Actor
from accounts.services import agent_token_create
from memory.claims.models import Claim, ClaimSource
from memory.claims.services.events import event_record
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


def test_batches_and_single_submits_on_the_same_identities_leave_one_active_each(live_server, acme):
    secret, tool_result = _token_and_event(acme, max_authority="tool_verified", kind="tool_result")
    predicates = [f"office_{n}" for n in range(8)]

    def body(predicate: str, value: str, day: int) -> dict:
        return candidate(
            tool_result,
            predicate=predicate,
            value=value,
            text=f"{predicate} is {value}",
            authority="tool_verified",
            available_at=f"2026-11-{day:02d}T00:00:00Z",
        )

    # Each batch names every identity, in an order of its own, so batches lock
    # overlapping sets; one batch names every identity twice.
    batches = [
        [
            body(p, f"batch{b}-{p}", b + 1)
            for p in (predicates[b:] + predicates[:b])[:: 1 - 2 * (b % 2)]
        ]
        for b in range(4)
    ]
    batches.append([body(p, f"twice-{n}", 5 + n) for p in predicates for n in range(2)])
    singles = [body(p, f"single-{p}", 9) for p in predicates]
    headers = {"Authorization": f"Bearer {secret}"}

    def send(job: tuple[str, object]) -> httpx.Response:
        kind, payload = job
        if kind == "batch":
            return httpx.post(
                f"{live_server.url}/api/v1/claims:batch",
                json={"items": payload},
                headers=headers,
                timeout=120,
            )
        return httpx.post(
            f"{live_server.url}/api/v1/claims", json=payload, headers=headers, timeout=120
        )

    jobs = [("batch", b) for b in batches] + [("single", s) for s in singles]
    jobs = [jobs[i] for i in (0, 5, 1, 6, 2, 7, 3, 8, 4, 9, 10, 11, 12)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        responses = list(pool.map(send, jobs))

    assert [r.status_code for r in responses] == [
        200 if kind == "batch" else 201 for kind, _ in jobs
    ], [r.text for r in responses]
    verdicts = [v for r in responses for v in (r.json().get("results") or [r.json()])]
    assert not [v for v in verdicts if "error" in v]
    assert len(verdicts) == 4 * 8 + 16 + 8
    for predicate in predicates:
        claims = Claim.objects.filter(tenant=acme, predicate=predicate)
        assert claims.filter(status="active").count() == 1, predicate
        # Every submission left its claim, each identity's revisions numbered without a gap.
        assert sorted(claims.values_list("revision", flat=True)) == list(range(1, 8))
