"""memdesk's RFC 9457 problem details as exceptions.

Every answer memdesk refuses carries a stable machine `code`. The client raises
one exception class per family (the HTTP status tells the family), and a few
codes an agent branches on get a class of their own inside their family. Look a
class up by code with `error_class_for(code)`; catch a family to handle all its
codes alike.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ApprovalRequired",
    "AuthenticationError",
    "CapabilityRequired",
    "ConflictError",
    "ConnectionFailed",
    "EvidenceRequired",
    "GoneError",
    "IdempotencyKeyReused",
    "IllegalTransition",
    "InvalidRequest",
    "MemdeskError",
    "NotFoundError",
    "PayloadTooLarge",
    "PermissionDenied",
    "PersonRequired",
    "ProblemError",
    "RateLimited",
    "ReceiptAlreadyUsed",
    "RequestInProgress",
    "RequestTimedOut",
    "ServerError",
    "SourceRequired",
    "SubjectRequired",
    "TransportError",
    "UnsafePathSegment",
    "VersionRevoked",
    "error_class_for",
    "problem_error",
]


class MemdeskError(Exception):
    """Anything the client raises."""


class TransportError(MemdeskError):
    """The request got no answer from memdesk: whether memdesk acted on it is unknown."""


class ConnectionFailed(TransportError):
    """memdesk could not be reached, or the connection broke before an answer."""


class RequestTimedOut(TransportError):
    """No answer within the client's timeout."""


class UnsafePathSegment(MemdeskError, ValueError):
    """A value meant for one place in an API path could lead elsewhere; nothing was sent."""

    code = "unsafe_path"

    def __init__(self, what: str, value: object, reason: str) -> None:
        self.what = what
        self.value = value
        super().__init__(f"refusing {what} {value!r}: it {reason}")


class ProblemError(MemdeskError):
    """memdesk answered with a problem document (`application/problem+json`)."""

    def __init__(
        self,
        problem: dict[str, Any],
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.problem: dict[str, Any] = dict(problem)
        # Seconds memdesk asked the caller to wait (`Retry-After`), when it said.
        self.retry_after = retry_after
        self.status: int = int(problem.get("status") or status or 0)
        self.code: str = str(problem.get("code") or "unknown")
        self.detail: str = str(problem.get("detail") or problem.get("title") or "")
        self.title: str = str(problem.get("title") or "")
        self.errors: dict[str, list[str]] = dict(problem.get("errors") or {})
        super().__init__(f"{self.status} {self.code}: {self.detail}")


class InvalidRequest(ProblemError):
    """400 or 422: the request itself is wrong; sending it again changes nothing."""


class AuthenticationError(ProblemError):
    """401: the token is missing, unknown or revoked."""


class PermissionDenied(ProblemError):
    """403: the caller may not make this call."""


class NotFoundError(ProblemError):
    """404: no such object for this token (other tenants' objects are missing too)."""


class ConflictError(ProblemError):
    """409: the call clashes with the current state."""


class GoneError(ProblemError):
    """410: the object existed and may no longer be used."""


class PayloadTooLarge(ProblemError):
    """413: the body is over a limit."""


class RateLimited(ProblemError):
    """429: too many requests; `retry_after` says how many seconds to wait."""


class ServerError(ProblemError):
    """5xx: memdesk failed; a write without an idempotency key may or may not have happened."""


class SourceRequired(InvalidRequest):
    """A claim named no source."""


class TimeInFuture(InvalidRequest):
    """A time the event or claim was observed, became known or became valid lies ahead of
    memdesk's clock by more than its skew; `problem["errors"]` names the field."""


class SubjectRequired(InvalidRequest):
    """Recall named no subject: there is no cross-subject recall."""


class CapabilityRequired(PermissionDenied):
    """The token lacks the capability the call needs."""


class PersonRequired(PermissionDenied):
    """Only a signed-in person may make this call (end users' memories and deletions)."""


class IllegalTransition(ConflictError):
    """The receipt's state machine does not allow this move; `allowed` lists what it does."""

    @property
    def allowed(self) -> list[str]:
        return list(self.problem.get("allowed") or [])


class IdempotencyKeyReused(ConflictError):
    """The key was used before for a different request."""


class IdempotentReplyErased(ConflictError):
    """The key's first request ran, but its stored reply was erased with a deleted memory.

    Nothing ran again: `original_id` is what the first request made and
    `original_status` what it answered.
    """

    @property
    def original_id(self) -> str | None:
        return self.problem.get("id")

    @property
    def original_status(self) -> int | None:
        return self.problem.get("original_status")


class RequestInProgress(ConflictError):
    """A request with this key is still being processed."""


class EvidenceRequired(ConflictError):
    """The operation's policy needs more evidence before `succeeded`."""


class ApprovalRequired(ConflictError):
    """The operation's policy wants a person's approval before the receipt is submitted:
    it waits in `awaiting_approval`; submit again once it is back in `planned`."""


class VersionRevoked(GoneError):
    """The skill version was revoked and may not be loaded."""


class ReceiptAlreadyUsed(MemdeskError):
    """A receipt with this idempotency key exists and has left `planned`.

    The side effect may already have happened: do not make the call again;
    read `receipt["state"]` (or ask `recover`) to learn what is known.
    """

    def __init__(self, receipt: dict[str, Any]) -> None:
        self.receipt = receipt
        super().__init__(
            f"receipt {receipt.get('id')} for this idempotency key is already "
            f"{receipt.get('state')!r}; the call may have happened, so it is not made again"
        )


_FAMILIES: dict[int, type[ProblemError]] = {
    400: InvalidRequest,
    401: AuthenticationError,
    403: PermissionDenied,
    404: NotFoundError,
    409: ConflictError,
    410: GoneError,
    413: PayloadTooLarge,
    422: InvalidRequest,
    429: RateLimited,
}

_BY_CODE: dict[str, type[ProblemError]] = {
    "source_required": SourceRequired,
    "subject_required": SubjectRequired,
    "time_in_future": TimeInFuture,
    "capability_required": CapabilityRequired,
    "person_required": PersonRequired,
    "illegal_transition": IllegalTransition,
    "idempotency_key_reused": IdempotencyKeyReused,
    "idempotent_reply_erased": IdempotentReplyErased,
    "request_in_progress": RequestInProgress,
    "evidence_required": EvidenceRequired,
    "approval_required": ApprovalRequired,
    "version_revoked": VersionRevoked,
    "throttled": RateLimited,
    "not_found": NotFoundError,
}


def error_class_for(code: str, status: int | None = None) -> type[ProblemError]:
    """The exception class for a problem `code` (falling back to the status's family)."""
    if code in _BY_CODE:
        return _BY_CODE[code]
    if status is not None:
        if status in _FAMILIES:
            return _FAMILIES[status]
        if status >= 500:
            return ServerError
        if 400 <= status < 500:
            return InvalidRequest
    return ProblemError


def problem_error(
    problem: dict[str, Any], *, status: int, retry_after: float | None = None
) -> ProblemError:
    """Build the exception for a problem document memdesk answered with `status`."""
    code = str(problem.get("code") or "")
    return error_class_for(code, status)(problem, status=status, retry_after=retry_after)
