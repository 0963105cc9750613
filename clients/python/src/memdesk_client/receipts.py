"""The receipt helper: write the receipt before the call, report what happened after it.

```python
with desk.receipt(operation="articles.create", target=url, intent=intent,
                  idempotency_key="pub-2026-08-16-a") as r:
    r.submitted()
    result = platform.create(...)          # the side effect, made once
    r.succeeded(external_id=result.id, evidence={"status": 201})
```

What the block leaves behind decides the report (RECEIPT_TRANSITIONS in memdesk):

- it reported `succeeded`, `rejected` or `outcome_unknown` itself: nothing more;
- it left after `submitted()` without a report — a timeout, a broken connection,
  any other exception, or none at all: the call may have reached the platform,
  so the receipt becomes `outcome_unknown` (memdesk settles it with a read) and
  the exception goes on to the caller. Nothing is ever sent again;
- it left before `submitted()`: the call was never made. An agent has no move
  out of `planned`, and `planned` is itself the proof that nothing was sent;
  the receipt stays so and the exception goes on.

Entering the block plans the receipt. When memdesk already holds a receipt for
this idempotency key that has left `planned`, the call may have happened
before: `ReceiptAlreadyUsed` is raised and the block does not run.
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING, Any

import httpx

from memdesk_client.errors import (
    ConnectionFailed,
    MemdeskError,
    ReceiptAlreadyUsed,
    RequestTimedOut,
)
from memdesk_client.types import Receipt

if TYPE_CHECKING:
    from types import TracebackType

    from memdesk_client.async_desk import AsyncDesk
    from memdesk_client.desk import Desk

__all__ = ["AsyncReceiptScope", "ReceiptScope", "unknown_outcome_code"]


def unknown_outcome_code(exc: BaseException | None) -> str:
    """The `error_code` stored when a block ends after `submitted()` without a report."""
    if exc is None:
        return "outcome_not_reported"
    if isinstance(exc, TimeoutError | socket.timeout | httpx.TimeoutException | RequestTimedOut):
        return "timeout"
    if isinstance(exc, ConnectionError | httpx.TransportError | ConnectionFailed):
        return "connection_error"
    return "client_exception"


def _evidence(exc: BaseException | None) -> dict[str, Any]:
    # The exception's type only: its message may quote the request, credentials included.
    return {"exception": type(exc).__name__} if exc is not None else {"reported": False}


class _ScopeBase:
    def __init__(self, plan: dict[str, Any]) -> None:
        self._plan = plan
        self._receipt: Receipt | None = None

    @property
    def receipt(self) -> Receipt:
        if self._receipt is None:
            raise MemdeskError("the receipt is planned when the `with` block is entered")
        return self._receipt

    @property
    def id(self) -> str:
        return self.receipt["id"]

    @property
    def state(self) -> str:
        return self.receipt["state"]

    def _accept_plan(self, receipt: Receipt) -> None:
        if receipt["state"] != "planned":
            raise ReceiptAlreadyUsed(dict(receipt))
        self._receipt = receipt

    def _must_report_unknown(self) -> bool:
        return self._receipt is not None and self._receipt["state"] == "submitted"


class ReceiptScope(_ScopeBase):
    """The `with desk.receipt(...)` block (see the module's documentation)."""

    def __init__(self, desk: Desk, plan: dict[str, Any]) -> None:
        super().__init__(plan)
        self._desk = desk

    def __enter__(self) -> ReceiptScope:
        receipt, _created = self._desk.plan_receipt(**self._plan)
        self._accept_plan(receipt)
        return self

    def submitted(self, *, lease_seconds: int | None = None) -> Receipt:
        """Say the call is about to be sent: from now on its outcome must be reported."""
        return self._move("submitted", lease_seconds=lease_seconds)

    def succeeded(
        self, *, external_id: str | None = None, evidence: dict[str, Any] | None = None
    ) -> Receipt:
        return self._move("succeeded", external_id=external_id, evidence=evidence)

    def rejected(
        self, *, error_code: str | None = None, evidence: dict[str, Any] | None = None
    ) -> Receipt:
        """The platform answered and refused: nothing happened there."""
        return self._move("rejected", error_code=error_code, evidence=evidence)

    def outcome_unknown(
        self, *, error_code: str | None = None, evidence: dict[str, Any] | None = None
    ) -> Receipt:
        """No answer that says what happened; memdesk settles it with a read."""
        return self._move("outcome_unknown", error_code=error_code, evidence=evidence)

    def _move(self, to: str, **fields: Any) -> Receipt:
        self._receipt = self._desk.transition_receipt(self.id, to, **fields)
        return self._receipt

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self._must_report_unknown():
            return
        try:
            self.outcome_unknown(error_code=unknown_outcome_code(exc), evidence=_evidence(exc))
        except MemdeskError as failed:
            if exc is None:
                raise
            exc.add_note(f"memdesk was not told the outcome is unknown: {failed}")


class AsyncReceiptScope(_ScopeBase):
    """`async with desk.receipt(...)`: the same rules as `ReceiptScope`."""

    def __init__(self, desk: AsyncDesk, plan: dict[str, Any]) -> None:
        super().__init__(plan)
        self._desk = desk

    async def __aenter__(self) -> AsyncReceiptScope:
        receipt, _created = await self._desk.plan_receipt(**self._plan)
        self._accept_plan(receipt)
        return self

    async def submitted(self, *, lease_seconds: int | None = None) -> Receipt:
        return await self._move("submitted", lease_seconds=lease_seconds)

    async def succeeded(
        self, *, external_id: str | None = None, evidence: dict[str, Any] | None = None
    ) -> Receipt:
        return await self._move("succeeded", external_id=external_id, evidence=evidence)

    async def rejected(
        self, *, error_code: str | None = None, evidence: dict[str, Any] | None = None
    ) -> Receipt:
        return await self._move("rejected", error_code=error_code, evidence=evidence)

    async def outcome_unknown(
        self, *, error_code: str | None = None, evidence: dict[str, Any] | None = None
    ) -> Receipt:
        return await self._move("outcome_unknown", error_code=error_code, evidence=evidence)

    async def _move(self, to: str, **fields: Any) -> Receipt:
        self._receipt = await self._desk.transition_receipt(self.id, to, **fields)
        return self._receipt

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self._must_report_unknown():
            return
        try:
            await self.outcome_unknown(
                error_code=unknown_outcome_code(exc), evidence=_evidence(exc)
            )
        except MemdeskError as failed:
            if exc is None:
                raise
            exc.add_note(f"memdesk was not told the outcome is unknown: {failed}")
