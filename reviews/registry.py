"""How domain apps plug their queues into the review desk.

`reviews` knows items, leases and decisions, never claims or skills. Each
domain app registers one `QueuePolicy` per queue in its `AppConfig.ready()`:
the handler that applies a verdict to its target inside the decision's
transaction, and everything a person or an agent may say in a decision on
that queue — verdicts and their button labels, the reason vocabulary, and the
payload serializer. The console and the API both validate with that one
declaration (through `reviews.services.review_decide`), so they cannot drift.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from rest_framework import serializers

if TYPE_CHECKING:
    from accounts.actors import Actor
    from reviews.models import Decision, ReviewItem

# The one reason code every queue understands; it always needs a note.
OTHER_REASON = ("other", "Other (explain in the note)")


@dataclass(frozen=True)
class DecisionInput:
    """One verdict on one item, as a person gave it; `payload` is validated."""

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


@dataclass(frozen=True)
class UndoInput:
    """A decision being taken back: the target goes back to `before`, the state its
    handler's `snapshot` saw just before the decision."""

    item: ReviewItem
    decision: Decision
    before: dict[str, Any]
    actor: Actor


class UndoableHandler(DecisionHandler, Protocol):
    """A handler whose decisions can be taken back within `REVIEW_UNDO_SECONDS`.

    Optional: a handler without `revert` makes every decision of its queue final
    (an erasure, a settled receipt, a published skill cannot be called back)."""

    def snapshot(
        self, *, item: ReviewItem, verdict: str, before: dict[str, Any] | None = None
    ) -> dict[str, Any] | None:
        """The target's state as JSON, enough to restore it and to tell whether it moved;
        None when `verdict` cannot be taken back. Taken before the decision, then after it
        and at the undo with `before` given, so those two cover the same things."""

    def revert(self, undo: UndoInput) -> None:
        """Put the target back as `undo.before` says, with legal, audited moves. Called
        only while the target's snapshot still equals the one taken after the decision."""


class RecordingHandler(DecisionHandler, Protocol):
    """A handler that keeps a record of its own naming the decision (memory keeps an
    editor's verdict on a screened claim as a labelled example).

    Optional: `recorded` runs in the decision's transaction once the decision row exists."""

    def recorded(self, *, item: ReviewItem, decision: Decision) -> None:
        """Write what the domain keeps of `decision`; raising rolls the decision back."""


class FollowingHandler(DecisionHandler, Protocol):
    """A handler whose target may need another decision after this one (a skill version
    that widens what the skill may do needs two approvers).

    Optional: `follow_up` runs in the decision's transaction once the item is closed."""

    def follow_up(self, *, item: ReviewItem) -> None:
        """Open the target's next item if it still waits for a person (`review_open`)."""


class QueuePresenter(Protocol):
    """How the console shows a queue's targets; supplied by the app that owns them.

    Optional: `stylesheets` (static paths the queue page loads for the detail pane) and
    `outcome(item=, decision=)` (one sentence saying what a decision did)."""

    def rows(self, *, items: list[ReviewItem]) -> dict[int, dict[str, Any]]:
        """One summary per item id (`title`, optional `status` and `reasons`: the reason codes
        in words), in a fixed number of queries."""

    def detail(self, *, item: ReviewItem) -> tuple[str, dict[str, Any]]:
        """The template showing the item's evidence, and its context."""


class NoPayload(serializers.Serializer):
    """A queue whose verdicts carry nothing but the verdict, reason and note."""


@dataclass(frozen=True)
class QueuePolicy:
    handler: DecisionHandler
    verdicts: tuple[str, ...]
    # Verdicts that turn something down: shown as the danger button, reached by `r`.
    negative_verdicts: tuple[str, ...] = ("reject",)
    roles: tuple[str, ...] = ("editor", "admin")
    presenter: QueuePresenter | None = None
    # The verdict bulk actions and the `a` shortcut apply.
    approve_verdict: str | None = None
    # What each verdict's button says; a verdict without a label shows its name.
    labels: Mapping[str, str] = field(default_factory=dict)
    # The reason codes a decision in this queue may give, with their labels.
    reasons: tuple[tuple[str, str], ...] = (OTHER_REASON,)
    # Verdicts that need a reason; None means the negative verdicts.
    reason_required: tuple[str, ...] | None = None
    # Whether a note alone is reason enough (a receipt settled by hand needs a
    # reason in words; a rejected memory needs a code the metrics can count).
    note_is_reason: bool = False
    # The fields a decision's payload may carry, validated for console and API alike.
    payload: type[serializers.Serializer] = NoPayload

    def label(self, verdict: str) -> str:
        return self.labels.get(verdict) or verdict.replace("_", " ").capitalize()

    def needs_reason(self, verdict: str) -> bool:
        required = self.negative_verdicts if self.reason_required is None else self.reason_required
        return verdict in required

    @property
    def reason_codes(self) -> tuple[str, ...]:
        return tuple(code for code, _label in self.reasons)

    def reason_label(self, code: str) -> str:
        return dict(self.reasons).get(code, code)

    @property
    def reason_hint(self) -> str:
        """What the reason select says about when a reason is needed."""
        required = [v for v in self.verdicts if self.needs_reason(v)]
        if not required:
            return "optional"
        names = " or ".join(f"“{self.label(v)}”" for v in required)
        if len(required) == len(self.verdicts):
            names = "every verdict"
        if self.note_is_reason:
            return f"a reason or a note is required for {names}"
        return f"required for {names}"

    def verdict_choices(self) -> list[tuple[str, str]]:
        return [(verdict, self.label(verdict)) for verdict in self.verdicts]


class DecisionOutcome(Protocol):
    """Optional presenter hook: one sentence saying what a decision did."""

    def outcome(self, *, item: ReviewItem, decision: Decision) -> str: ...


_policies: dict[str, QueuePolicy] = {}


def register_queue(queue: str, policy: QueuePolicy) -> None:
    _policies[queue] = policy


def policy_for(queue: str) -> QueuePolicy | None:
    return _policies.get(queue)
