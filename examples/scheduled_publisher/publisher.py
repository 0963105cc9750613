"""The scheduled publisher: each trigger publishes one day's digest to the blog, at most once.

It keeps no state of its own between runs. On every trigger it asks memdesk
what to do (recovery reads the checkpoint and the receipts it names), writes a
receipt before the call, reports what happened with the platform's id and the
article's URL as evidence, and settles anything it cannot know by letting
memdesk read the platform, never by writing again.
"""

from __future__ import annotations

import hashlib
import json
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memdesk_client import Desk
from memdesk_client.errors import IllegalTransition
from memdesk_client.types import Receipt, Recovery

OPERATION = "articles.create"
# The same write under a policy that asks a person to approve each receipt first.
APPROVED_OPERATION = "articles.create_approved"
# Taking a published article down again: the compensation of `articles.create`.
UNDO_OPERATION = "articles.delete"
# States no one moves a receipt out of, and the one that allows trying again.
SETTLED = {"succeeded", "safe_to_retry", "manual_review", "rejected"}


class Crash(Exception):
    """The process died here: a fault the driver injects after the call returned."""

    def __init__(self, outcome: RunOutcome) -> None:
        super().__init__(f"crashed after the call ({outcome.decision}/{outcome.reason})")
        self.outcome = outcome


@dataclass(frozen=True)
class Trigger:
    day: str
    sources: tuple[str, ...]
    triggered_at: datetime
    # A run that names itself takes the task's recovery lease when it is sent to act, so
    # a concurrent trigger of the same task is told `in_progress`.
    run_id: str = ""

    @property
    def task_key(self) -> str:
        return f"digest:{self.day}"

    @property
    def input_fingerprint(self) -> str:
        canonical = json.dumps(sorted(self.sources), separators=(",", ":")).encode()
        return "sha256:" + hashlib.sha256(canonical).hexdigest()


@dataclass
class RunOutcome:
    decision: str
    reason: str
    # The answer in memdesk's recovery log, for a verdict on it.
    answer_id: int | None = None
    calls: int = 0
    # Receipt states this run left behind, in the order it settled them.
    settled: list[str] = field(default_factory=list)
    escalated: bool = False
    # The call waited for, and got, a person's approval.
    approved: bool = False
    # Compensations this run carried out (recovery answered `compensate`).
    compensated: int = 0


class Publisher:
    def __init__(
        self,
        desk: Desk,
        *,
        blog_url: str,
        platform: str,
        call_timeout: float = 1.0,
        settle_timeout: float = 60.0,
    ) -> None:
        self.desk = desk
        self.blog_url = blog_url
        self.platform = platform
        self.call_timeout = call_timeout
        self.settle_timeout = settle_timeout
        self.operation = OPERATION

    # -- one trigger ----------------------------------------------------------------

    def run(self, trigger: Trigger, *, crash_after_call: bool = False) -> RunOutcome:
        answer = self._recover(trigger)
        outcome = RunOutcome(
            decision=answer["decision"], reason=answer["reason"], answer_id=answer.get("answer_id")
        )
        checkpoint: Mapping[str, Any] = answer.get("checkpoint") or {}
        if outcome.decision in {"no_op", "in_progress", "wait"}:
            # Done already, another run is acting on it, or not yet: nothing to do now.
            return outcome
        if outcome.decision == "escalate":
            outcome.escalated = True
            return outcome
        if outcome.decision == "compensate":
            for compensation in answer.get("compensations") or []:
                self._compensate(compensation, outcome)
            self._checkpoint(trigger, answer.get("compensations") or [], 0, complete=True)
            return outcome
        attempt = 0
        if outcome.decision == "verify_only":
            states = [self._settle(effect, outcome) for effect in answer["effects"]]
            if all(state == "succeeded" for state in states):
                self._checkpoint(trigger, answer["effects"], attempt, complete=True)
                return outcome
            if any(
                state in {"manual_review", "reconciling", "outcome_unknown"} for state in states
            ):
                outcome.escalated = True
                return outcome
            attempt = checkpoint.get("retry_count", 0) + 1
        elif outcome.decision == "resume":
            attempt = checkpoint.get("retry_count", 0) + 1
        self._publish(trigger, attempt, outcome, crash_after_call=crash_after_call)
        if trigger.run_id:
            # Done: the next trigger may decide at once. (A crash never gets here: its
            # lease runs out instead.)
            self.desk.release_recovery(trigger.task_key, trigger.run_id)
        return outcome

    def _recover(self, trigger: Trigger) -> Recovery:
        return self.desk.recover(
            trigger.task_key,
            trigger.input_fingerprint,
            triggered_at=trigger.triggered_at,
            run_id=trigger.run_id,
        )

    # -- the side effect -------------------------------------------------------------

    def _publish(
        self, trigger: Trigger, attempt: int, outcome: RunOutcome, *, crash_after_call: bool
    ) -> None:
        intent = {
            "slug": f"digest-{trigger.day}",
            "title": f"Digest for {trigger.day}",
            "digest": trigger.input_fingerprint,
        }
        key = f"digest-{trigger.day}-{trigger.input_fingerprint[7:23]}-{attempt}"
        receipt, created = self.desk.plan_receipt(
            operation=self.operation,
            target=self.blog_url + "articles",
            intent=intent,
            idempotency_key=key,
            reconciler={
                "adapter": "http",
                "platform": self.platform,
                "lookup_path": "articles?key={idempotency_key}",
                "external_id_field": "id",
            },
        )
        if receipt["state"] == "awaiting_approval":
            # An impactful operation: a person approves the intent before the call.
            receipt = self._await_approval(receipt)
            if receipt["state"] != "planned":
                outcome.settled.append(receipt["state"])
                outcome.escalated = True
                return
            outcome.approved = True
        if not created and receipt["state"] != "planned":
            # Another trigger already made this call: learn its outcome, never repeat it.
            self._finish(trigger, receipt, attempt, outcome)
            return
        self._checkpoint(trigger, [receipt], attempt, complete=False)
        try:
            receipt = self.desk.transition_receipt(receipt["id"], "submitted", lease_seconds=30)
        except IllegalTransition:
            # A concurrent trigger submitted it first: it is the one calling.
            self._finish(trigger, self.desk.get_receipt(receipt["id"]), attempt, outcome)
            return
        outcome.calls += 1
        try:
            article = self._post(key, intent)
        except (TimeoutError, ConnectionError, urllib.error.URLError) as error:
            receipt = self.desk.transition_receipt(
                receipt["id"], "outcome_unknown", error_code=type(error).__name__
            )
        else:
            if crash_after_call:
                raise Crash(outcome)
            receipt = self.desk.transition_receipt(
                receipt["id"],
                "succeeded",
                external_id=article["id"],
                evidence={"url": article["url"]},
            )
        self._finish(trigger, receipt, attempt, outcome)

    def _finish(
        self, trigger: Trigger, receipt: Receipt, attempt: int, outcome: RunOutcome
    ) -> None:
        state = self._settle(receipt, outcome)
        if state == "succeeded":
            self._checkpoint(trigger, [receipt], attempt, complete=True)
        elif state == "safe_to_retry" and attempt < 3:
            # Absence was proven by a read: the article was never stored.
            self._publish(trigger, attempt + 1, outcome, crash_after_call=False)
        else:
            outcome.escalated = True

    def _post(self, key: str, intent: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(  # noqa: S310 - the blog's URL is the operator's
            self.blog_url + "articles",
            data=json.dumps(intent).encode(),
            headers={"Content-Type": "application/json", "Idempotency-Key": key},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=self.call_timeout) as response:  # noqa: S310
            return json.loads(response.read())

    def plan_compensation(self, effect: Receipt) -> Receipt:
        """Plan taking down what `effect` published (before anything is called): recovery
        answers `compensate` with it once the operation's policy says so."""
        receipt, _ = self.desk.plan_receipt(
            operation=UNDO_OPERATION,
            target=self.blog_url + "articles",
            intent={"key": effect["idempotency_key"]},
            idempotency_key=f"undo-{effect['idempotency_key']}",
            reconciler={"adapter": "manual"},
            compensates=effect["id"],
        )
        return receipt

    def _compensate(self, compensation: Receipt, outcome: RunOutcome) -> None:
        self.desk.transition_receipt(compensation["id"], "submitted", lease_seconds=30)
        request = urllib.request.Request(  # noqa: S310 - the blog's URL is the operator's
            self.blog_url + "articles?key=" + compensation["intent"]["key"], method="DELETE"
        )
        try:
            with urllib.request.urlopen(request, timeout=self.call_timeout) as response:  # noqa: S310
                taken_down = json.loads(response.read())
        except (TimeoutError, ConnectionError, urllib.error.URLError) as error:
            self.desk.transition_receipt(
                compensation["id"], "outcome_unknown", error_code=type(error).__name__
            )
            outcome.escalated = True
            return
        self.desk.transition_receipt(
            compensation["id"],
            "succeeded",
            external_id=taken_down["id"],
            evidence={"url": f"/posts/{taken_down['id']}", "deleted": True},
        )
        outcome.compensated += 1

    def _await_approval(self, receipt: Receipt) -> Receipt:
        """Wait for a person's decision on the receipt's intent: `planned` when approved."""
        deadline = time.monotonic() + self.settle_timeout
        while receipt["state"] == "awaiting_approval" and time.monotonic() < deadline:
            time.sleep(0.2)
            receipt = self.desk.get_receipt(receipt["id"])
        return receipt

    # -- settling what the run cannot know -------------------------------------------

    def _settle(self, receipt: Receipt, outcome: RunOutcome) -> str:
        """Wait until memdesk settled the receipt; report a dead run's call as unknown first."""
        if receipt["state"] == "submitted":
            # A run that died after submitting: nobody knows whether the call happened.
            receipt = self.desk.transition_receipt(
                receipt["id"], "outcome_unknown", error_code="agent_restarted"
            )
        deadline = time.monotonic() + self.settle_timeout
        while receipt["state"] not in SETTLED and time.monotonic() < deadline:
            time.sleep(0.2)
            receipt = self.desk.get_receipt(receipt["id"])
        outcome.settled.append(receipt["state"])
        return receipt["state"]

    def _checkpoint(
        self, trigger: Trigger, receipts: list[Receipt], attempt: int, *, complete: bool
    ) -> None:
        self.desk.checkpoint(
            trigger.task_key,
            input_fingerprint=trigger.input_fingerprint,
            stage="publish",
            stage_complete=complete,
            retry_count=attempt,
            max_retries=3,
            effects=[receipt["id"] for receipt in receipts],
        )
