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


def submit(agent, **overrides: Any) -> dict[str, Any]:
    response = agent.post("/api/v1/claims", candidate(**overrides), format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def recall(agent, **body: Any) -> dict[str, Any]:
    body.setdefault("subject", "user:alice")
    response = agent.post("/api/v1/recall", body, format="json")
    assert response.status_code == 200, response.json()
    return response.json()
