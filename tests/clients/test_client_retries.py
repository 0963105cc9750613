"""The client's retries, through a real memdesk on loopback and transports that lose or
refuse an answer: a creating write is retried with its key and leaves one row, a write
memdesk does not deduplicate is never sent twice, and retries follow the contract."""

from __future__ import annotations

import uuid

import httpx
import pytest
from memdesk_client import Desk
from memdesk_client.errors import (
    RateLimited,
    RequestTimedOut,
    ServerError,
)

from memory.claims.models import Claim, Event
from tests.clients.test_python_client import TIMEOUT, _accepted_fact


class _LoseFirstAnswer(httpx.BaseTransport):
    """Delivers every request to memdesk, but loses the answer to the first one, as a
    network that drops a connection after the server committed would."""

    def __init__(self) -> None:
        self._inner = httpx.HTTPTransport()
        self.sent: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request)
        response = self._inner.handle_request(request)
        response.read()
        if len(self.sent) == 1:
            raise httpx.ReadTimeout("answer lost", request=request)
        return response


def test_a_lost_answer_is_retried_with_the_same_key_and_leaves_one_row(live_server, agent_token):
    network = _LoseFirstAnswer()
    with Desk(live_server.url, agent_token, timeout=TIMEOUT, transport=network) as desk:
        event = desk.log_event("user:alice", "user_statement", "I like green tea")
    assert len(network.sent) == 2
    keys = {request.headers["Idempotency-Key"] for request in network.sent}
    assert len(keys) == 1
    assert list(Event.objects.values_list("id", flat=True)) == [uuid.UUID(event["id"])]


def test_a_write_memdesk_does_not_deduplicate_is_not_sent_twice(live_server, agent_token):
    with Desk(live_server.url, agent_token, timeout=TIMEOUT) as setup:
        claim_id = _accepted_fact(setup, "home_city", "Shanghai", "Alice lives in Shanghai")
    network = _LoseFirstAnswer()
    desk = Desk(live_server.url, agent_token, timeout=TIMEOUT, transport=network)
    with desk, pytest.raises(RequestTimedOut):
        desk.invalidate_claim(claim_id, "moved again")
    assert len(network.sent) == 1
    assert Claim.objects.get(id=claim_id).status == "invalidated"


class _RefuseFirst(httpx.BaseTransport):
    """Answers the first request itself with `status` (and `headers`), as a proxy in front
    of memdesk or memdesk's throttle would, and delivers every later one to memdesk."""

    def __init__(self, status: int, headers: dict[str, str] | None = None) -> None:
        self._inner = httpx.HTTPTransport()
        self._status = status
        self._headers = headers or {}
        self.sent: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request)
        if len(self.sent) == 1:
            problem = {
                "type": "about:blank",
                "title": "Refused",
                "status": self._status,
                "detail": "refused before any work",
                "code": "throttled" if self._status == 429 else "unavailable",
            }
            return httpx.Response(
                self._status,
                json=problem,
                headers={"Content-Type": "application/problem+json", **self._headers},
            )
        return self._inner.handle_request(request)


def _fast_retries():
    from memdesk_client import RetryPolicy

    return RetryPolicy(backoff_seconds=0.01, max_backoff_seconds=0.02)


def test_retries_follow_the_contract(live_server, agent_token):
    with Desk(live_server.url, agent_token, timeout=TIMEOUT) as setup:
        claim_id = _accepted_fact(setup, "home_city", "Shanghai", "Alice lives in Shanghai")

    def desk_behind(network: _RefuseFirst) -> Desk:
        return Desk(
            live_server.url, agent_token, timeout=TIMEOUT, transport=network, retry=_fast_retries()
        )

    # A read after a 503 is asked again.
    network = _RefuseFirst(503)
    with desk_behind(network) as desk:
        assert desk.get_claim(claim_id)["id"] == claim_id
    assert len(network.sent) == 2

    # Recall writes a trace: after a 503 it is not sent again blind.
    network = _RefuseFirst(503)
    with desk_behind(network) as desk, pytest.raises(ServerError) as unavailable:
        desk.recall("user:alice", "where")
    assert (unavailable.value.status, len(network.sent)) == (503, 1)

    # A 429 with Retry-After was refused before any work: any call may wait and go again.
    network = _RefuseFirst(429, {"Retry-After": "0"})
    with desk_behind(network) as desk:
        assert desk.recall("user:alice", "where does alice live").items[0].id == claim_id
    assert len(network.sent) == 2

    # Without Retry-After the client does not guess.
    network = _RefuseFirst(429)
    with desk_behind(network) as desk, pytest.raises(RateLimited) as limited:
        desk.recall("user:alice", "where")
    assert (limited.value.code, len(network.sent)) == ("throttled", 1)
