"""How domain apps plug their decisions into the queues.

`reviews` knows items, leases and decisions, never claims or skills. Each
domain app registers one handler per queue in its `AppConfig.ready()`; the
handler applies a verdict to its target inside the decision's transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from accounts.actors import Actor
    from reviews.models import ReviewItem


@dataclass(frozen=True)
class DecisionInput:
    """One verdict on one item, as a person gave it."""

    item: ReviewItem
    verdict: str
    reason_code: str
    note: str
    payload: dict[str, Any]
    actor: Actor


class DecisionHandler(Protocol):
    def current_version(self, *, item: ReviewItem) -> str:
        """The target's state now; compared with the state when the item opened."""

    def apply(self, decision: DecisionInput) -> None:
        """Carry the verdict out on the target. Raise a Problem to refuse it."""


class QueuePresenter(Protocol):
    """How the console shows a queue's targets; supplied by the app that owns them."""

    def rows(self, *, items: list[ReviewItem]) -> dict[int, dict[str, Any]]:
        """One summary per item id (`title`, optional `status`), in a fixed number of queries."""

    def detail(self, *, item: ReviewItem) -> tuple[str, dict[str, Any]]:
        """The template showing the item's evidence, and its context."""


@dataclass(frozen=True)
class QueuePolicy:
    handler: DecisionHandler
    verdicts: tuple[str, ...]
    # Verdicts that turn something down and so need a reason code.
    negative_verdicts: tuple[str, ...] = ("reject",)
    roles: tuple[str, ...] = ("editor", "admin")
    presenter: QueuePresenter | None = None
    # The verdict bulk actions and the `a` shortcut apply.
    approve_verdict: str | None = None


_policies: dict[str, QueuePolicy] = {}


def register_queue(queue: str, policy: QueuePolicy) -> None:
    _policies[queue] = policy


def policy_for(queue: str) -> QueuePolicy | None:
    return _policies.get(queue)
