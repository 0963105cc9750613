"""Small builders for memory tests: an event as a source, a candidate body."""

from __future__ import annotations

from typing import Any

from django.utils import timezone


def post_event(agent, subject: str = "user:alice", text: str = "I live in Shanghai", **extra):
    body = {
        "subject": subject,
        "kind": "user_statement",
        "text": text,
        "observed_at": timezone.now().isoformat(),
        **extra,
    }
    response = agent.post("/api/v1/events", body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def candidate(event_id: str | None = None, **overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "subject": "user:alice",
        "kind": "fact",
        "predicate": "home_city",
        "value": "Shanghai",
        "text": "Alice lives in Shanghai",
        "authority": "user_explicit",
        "basis": "verified",
        "sources": [{"event": event_id}] if event_id else [{"uri": "chat://s1/m7"}],
    }
    body.update(overrides)
    return body


def evidence(agent, authority: str = "user_explicit", basis: str = "verified", **extra):
    """Source events that support `authority` and `basis` under the trust model: a user
    statement for `user_explicit`, a tool result for `tool_verified` or `basis: verified`.
    They count only when `agent`'s ceiling reaches that far (the `agent` fixture's does)."""
    events = []
    subject = extra.pop("subject", "user:alice")
    if authority == "user_explicit":
        events.append(post_event(agent, subject=subject, **extra))
    if authority == "tool_verified" or basis == "verified":
        events.append(
            post_event(
                agent,
                subject=subject,
                kind="tool_result",
                text="crm.lookup returned the record",
                **extra,
            )
        )
    return [{"event": event["id"]} for event in events] or [{"uri": "chat://s1/m7"}]


def submit(agent, **overrides: Any) -> dict[str, Any]:
    """Submit a candidate; without sources it cites the evidence its authority needs."""
    if overrides.get("event_id") is None and "sources" not in overrides:
        overrides["sources"] = evidence(
            agent,
            authority=overrides.get("authority", "user_explicit"),
            basis=overrides.get("basis", "verified"),
            subject=overrides.get("subject", "user:alice"),
        )
    response = agent.post("/api/v1/claims", candidate(**overrides), format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def recall(agent, **body: Any) -> dict[str, Any]:
    body.setdefault("subject", "user:alice")
    response = agent.post("/api/v1/recall", body, format="json")
    assert response.status_code == 200, response.json()
    return response.json()
