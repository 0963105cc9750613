"""What the sync and async desks share: the calls, the retry rules, the answers.

A `Call` describes one API request and how to read its answer; `Desk` and
`AsyncDesk` only send it. Whether a failed attempt may be sent again is decided
here, once, from the agent API contract:

- `Retry.SAFE` — reads, `PUT` checkpoints, recovery (read-only) and creating
  POSTs sent with an `Idempotency-Key`: memdesk answers a replay with the
  original answer, so a timeout, a broken connection, a 503 or a 429 is retried.
- `Retry.REFUSED_ONLY` — every other write: retried only after a 429 that says
  `Retry-After` (memdesk refused it before doing anything).

A receipt's side effect is the caller's own call to another system; the
client never makes it, so never repeats it.
"""

from __future__ import annotations

import enum
import random
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any, Generic, TypeVar
from urllib.parse import urlsplit

import httpx

from memdesk_client.errors import (
    ConnectionFailed,
    MemdeskError,
    ProblemError,
    RequestInProgress,
    RequestTimedOut,
    ServerError,
    TransportError,
    problem_error,
)

T = TypeVar("T")

USER_AGENT = "memdesk-client/0.1"


class Retry(enum.Enum):
    SAFE = "safe"
    REFUSED_ONLY = "refused_only"


@dataclass
class Call(Generic[T]):
    method: str
    path: str
    parse: Callable[[httpx.Response], T]
    retry: Retry
    params: Mapping[str, Any] | None = None
    json: Any = None
    files: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    # Statuses below 400 are answers; these 3xx ones too (304 Not Modified).
    accept: frozenset[int] = frozenset()


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait before sending a retry-safe call again."""

    max_retries: int = 3
    backoff_seconds: float = 0.25
    max_backoff_seconds: float = 8.0
    # A Retry-After longer than this is not waited for: the error is raised.
    max_retry_after_seconds: float = 60.0

    def backoff(self, attempt: int) -> float:
        ceiling = min(self.max_backoff_seconds, self.backoff_seconds * 2.0**attempt)
        return ceiling / 2 + random.uniform(0, ceiling / 2)


def new_idempotency_key() -> str:
    return f"mdc-{uuid.uuid4()}"


def idempotency_headers(key: str | None) -> dict[str, str]:
    return {"Idempotency-Key": key or new_idempotency_key()}


def parse_json(response: httpx.Response) -> Any:
    return response.json()


def parse_bytes(response: httpx.Response) -> bytes:
    return response.content


def retry_after_seconds(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        from datetime import UTC, datetime

        when: datetime = parsedate_to_datetime(value)
        return max(0.0, (when - datetime.now(UTC)).total_seconds())
    except (TypeError, ValueError):
        return None


def error_from_response(response: httpx.Response) -> ProblemError:
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict) or "code" not in body:
        body = {
            "type": "about:blank",
            "title": response.reason_phrase or "Error",
            "status": response.status_code,
            "detail": response.text[:500],
            "code": "server_error" if response.status_code >= 500 else "http_error",
        }
    return problem_error(
        body, status=response.status_code, retry_after=retry_after_seconds(response)
    )


def transport_error(exc: httpx.TransportError) -> TransportError:
    if isinstance(exc, httpx.TimeoutException):
        return RequestTimedOut(f"memdesk did not answer in time: {exc!r}")
    return ConnectionFailed(f"could not reach memdesk: {exc!r}")


def delay_before_retry(
    call: Call[Any],
    policy: RetryPolicy,
    attempt: int,
    error: MemdeskError,
) -> float | None:
    """Seconds to wait before sending `call` again after `error`, or None: raise it."""
    if attempt >= policy.max_retries:
        return None
    if isinstance(error, ProblemError) and error.status == 429:
        wait = error.retry_after
        if wait is None or wait > policy.max_retry_after_seconds:
            return None
        return wait
    if call.retry is not Retry.SAFE:
        return None
    if isinstance(error, TransportError | RequestInProgress):
        return policy.backoff(attempt)
    if isinstance(error, ServerError) and error.status == 503:
        wait = error.retry_after
        if wait is not None and wait <= policy.max_retry_after_seconds:
            return wait
        return policy.backoff(attempt)
    return None


def check_same_origin(base_url: str, url: str) -> str:
    """A list's `next` link, refused when it points at another host (the token goes with it)."""
    base, nxt = urlsplit(base_url), urlsplit(url)
    if nxt.scheme and (nxt.scheme, nxt.netloc) != (base.scheme, base.netloc):
        raise MemdeskError(f"refusing to follow a next link to another origin: {url}")
    return url


def compact(values: Mapping[str, Any]) -> dict[str, Any]:
    """The body without the optional fields the caller left out."""
    return {key: value for key, value in values.items() if value is not None}
