"""The fault-injection driver: N scheduled runs of the publisher, each with one fault,
then the agent reliability metrics as the driver observed them beside memdesk's /metrics.

Faults, one per scheduled run in turn: none; a crash after the platform call
returned (the next trigger must verify, not publish again); a call that times
out after the platform stored the article; a connection dropped after the
platform stored it; a duplicate trigger; two triggers at once (the recovery lease
lets one act); stale input (the sources changed since
the checkpoint); a reconciliation worker SIGKILLed in the middle of its read
(only when the harness can kill workers: `WorkerControl`); a broken verifier (the
blog's lookup answers 404 for everything while a dropped write's outcome is
unknown: memdesk must send it to a person, never make it `safe_to_retry`; the agent
then plans taking the article down, and the next trigger is told to `compensate`); an
operation whose policy asks a person to approve each call (only with an `Approver`).
"""

from __future__ import annotations

import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any, Protocol

from memdesk_client import Desk
from prometheus_client.parser import text_string_to_metric_families

from examples.scheduled_publisher.platform import (
    DROP_AFTER_COMMIT,
    STALL_AFTER_COMMIT,
    FakeBlog,
)
from examples.scheduled_publisher.publisher import (
    APPROVED_OPERATION,
    OPERATION,
    Crash,
    Publisher,
    RunOutcome,
    Trigger,
)

FAULTS = (
    "none",
    "crash_after_call",
    "timeout",
    "drop_after_commit",
    "duplicate_trigger",
    "concurrent_trigger",
    "stale_input",
    "worker_sigkill",
    "broken_verifier",
    "approval",
)
FRESH = ("fresh", "no_checkpoint")
LEASE_HELD = ("in_progress", "lease_held")
# Decisions that send a run to act: two of them for one task at once is a double recovery.
ACTING = {"fresh", "resume", "verify_only", "compensate"}


class Approver(Protocol):
    def approve(self, receipt_id: str) -> None:
        """A person (not the token's owner) approves the receipt's intent."""


class WorkerControl(Protocol):
    def kill_and_replace(self) -> None:
        """SIGKILL the reconciliation worker (and its pool) and start another."""


@dataclass
class MemdeskFigures:
    """The agent reliability figures for one tenant, as memdesk's /metrics shows them."""

    completions: float = 0
    duplicate_side_effects: float = 0
    unverified_completions: float = 0
    unverified_completion_rate: float = 0
    stale_claim_use_rate: float = 0
    recovery_answers_judged: float = 0
    recovery_answers_correct: float = 0
    reconciliation_outcomes: dict[str, float] = field(default_factory=dict)
    recovery_decisions_timed: float = 0
    recovery_latency_p50: float | None = None
    recovery_latency_p95: float | None = None


@dataclass
class DriverReport:
    scheduled_runs: int = 0
    triggers: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    skipped_faults: Counter[str] = field(default_factory=Counter)
    published: int = 0
    # Each run publishes one article, and one more when its input changed after the
    # checkpoint (new sources: a new article, not a duplicate).
    input_changes: int = 0
    # Runs whose effect a person must settle: the article stands, its receipt waits in
    # manual_review (the broken verifier's run, unless its compensation took it down).
    awaiting_a_person: int = 0
    # Articles the blog took down again (compensations).
    taken_down: int = 0
    # Receipts a read made safe_to_retry while the blog's lookup was broken: must be 0.
    safe_to_retry_while_broken: int = 0
    # Effects taken down again by a planned compensation (recovery answered `compensate`).
    compensations: int = 0
    # Calls that waited for a person's approval and were made only after it.
    approved_calls: int = 0
    # Tasks two runs acted on at once (two concurrent triggers both sent to act): must be 0.
    double_recoveries: int = 0
    # Published articles no succeeded receipt names, and receipts naming no article.
    untraced_articles: list[str] = field(default_factory=list)
    unpublished_receipts: list[str] = field(default_factory=list)
    duplicate_side_effects: int = 0
    succeeded_receipts: int = 0
    unverified_completions: int = 0
    decisions_correct: int = 0
    wrong_decisions: list[str] = field(default_factory=list)
    escalated_runs: int = 0
    memdesk: MemdeskFigures = field(default_factory=MemdeskFigures)

    @property
    def mismatches(self) -> list[str]:
        """Where what the driver observed and what memdesk's /metrics says differ."""
        pairs = {
            "completions": (self.succeeded_receipts, self.memdesk.completions),
            "published articles vs completions - compensations + awaiting a person": (
                self.published,
                self.memdesk.completions - self.compensations + self.awaiting_a_person,
            ),
            "published articles vs runs + input changes - taken down": (
                self.published,
                self.scheduled_runs + self.input_changes - self.taken_down,
            ),
            "articles without one receipt": (len(self.untraced_articles), 0),
            "safe_to_retry while the verifier was broken": (self.safe_to_retry_while_broken, 0),
            "double recoveries": (self.double_recoveries, 0),
            "receipts without an article": (len(self.unpublished_receipts), 0),
            "duplicate side effects": (
                self.duplicate_side_effects,
                self.memdesk.duplicate_side_effects,
            ),
            "unverified completions": (
                self.unverified_completions,
                self.memdesk.unverified_completions,
            ),
            "recovery decisions": (self.triggers, self.memdesk.recovery_decisions_timed),
            "recovery answers judged": (self.triggers, self.memdesk.recovery_answers_judged),
            "recovery answers correct": (
                self.decisions_correct,
                self.memdesk.recovery_answers_correct,
            ),
        }
        return [
            f"{name}: driver {ours}, memdesk {theirs:g}"
            for name, (ours, theirs) in pairs.items()
            if ours != theirs
        ]

    def lines(self) -> list[str]:
        memdesk = self.memdesk
        outcomes = ", ".join(
            f"{outcome} {count:g}"
            for outcome, count in sorted(memdesk.reconciliation_outcomes.items())
        )
        latency = (
            f"p50 {memdesk.recovery_latency_p50 * 1000:.0f} ms, "
            f"p95 {memdesk.recovery_latency_p95 * 1000:.0f} ms"
            if memdesk.recovery_latency_p50 is not None and memdesk.recovery_latency_p95 is not None
            else "none recorded"
        )
        faults = ", ".join(f"{name} {n}" for name, n in sorted(self.faults.items()))
        lines = [
            f"scheduled runs:                {self.scheduled_runs} ({self.triggers} triggers)",
            f"faults injected:               {faults}",
        ]
        if self.skipped_faults:
            skipped = ", ".join(sorted(self.skipped_faults))
            lines.append(f"faults skipped:                {skipped} (no worker control here)")
        lines += [
            f"articles published:            {self.published} (one per run: "
            f"{self.scheduled_runs}, plus {self.input_changes} after an input changed, "
            f"less {self.taken_down} taken down; "
            f"{self.published - len(self.untraced_articles)} traced to one receipt)",
            f"duplicate side effects:        {self.duplicate_side_effects} "
            f"(memdesk: {memdesk.duplicate_side_effects:g})",
            f"unverified completions:        {self.unverified_completions} "
            f"(memdesk: {memdesk.unverified_completions:g}, "
            f"rate {memdesk.unverified_completion_rate:.3f})",
            f"double recoveries:             {self.double_recoveries}",
            f"compensations carried out:     {self.compensations} (a failed effect taken "
            "down as its policy says)",
            f"calls approved by a person:    {self.approved_calls} (each waited in "
            "awaiting_approval until a person approved its intent)",
            f"recovery decisions correct:    {self.decisions_correct} / {self.triggers} "
            f"(memdesk: {memdesk.recovery_answers_correct:g} / "
            f"{memdesk.recovery_answers_judged:g} judged)",
            f"runs escalated to a person:    {self.escalated_runs} "
            f"({self.awaiting_a_person} published effect"
            f"{'s' if self.awaiting_a_person != 1 else ''} still waiting for a person)",
            f"broken verifier:               {self.safe_to_retry_while_broken} safe_to_retry "
            "(an absence read through it is sent to a person)",
            f"reconciliation outcomes:       {outcomes or 'none'}",
            f"recovery decision latency:     {latency}",
            f"stale claim use rate:          {memdesk.stale_claim_use_rate:.3f}",
            "metrics match memdesk's:       "
            + ("yes" if not self.mismatches else "NO — " + "; ".join(self.mismatches)),
        ]
        return lines


def read_metrics(base_url: str, tenant: str, token: str = "") -> MemdeskFigures:
    """memdesk's agent reliability figures for `tenant` from its Prometheus endpoint."""
    request = urllib.request.Request(base_url.rstrip("/") + "/metrics")  # noqa: S310
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
        text = response.read().decode()
    figures = MemdeskFigures()
    simple = {
        "memdesk_agent_completions": "completions",
        "memdesk_agent_duplicate_side_effects": "duplicate_side_effects",
        "memdesk_agent_unverified_completions": "unverified_completions",
        "memdesk_agent_unverified_completion_rate": "unverified_completion_rate",
        "memdesk_agent_stale_claim_use_rate": "stale_claim_use_rate",
        "memdesk_agent_recovery_answers_judged": "recovery_answers_judged",
        "memdesk_agent_recovery_answers_correct": "recovery_answers_correct",
        "memdesk_agent_recovery_decisions_timed": "recovery_decisions_timed",
    }
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.labels.get("tenant") != tenant:
                continue
            if sample.name in simple:
                setattr(figures, simple[sample.name], sample.value)
            elif sample.name == "memdesk_agent_reconciliation_outcomes":
                figures.reconciliation_outcomes[sample.labels["outcome"]] = sample.value
            elif sample.name == "memdesk_agent_recovery_decision_latency_seconds":
                quantile = sample.labels["quantile"]
                if quantile == "0.5":
                    figures.recovery_latency_p50 = sample.value
                elif quantile == "0.95":
                    figures.recovery_latency_p95 = sample.value
    return figures


class Driver:
    def __init__(
        self,
        desk: Desk,
        blog: FakeBlog,
        *,
        platform: str,
        workers: WorkerControl | None = None,
        approver: Approver | None = None,
        first_day: date = date(2026, 12, 1),
        call_timeout: float = 1.0,
        settle_timeout: float = 60.0,
        say: Callable[[str], None] = lambda line: None,
    ) -> None:
        self.desk = desk
        self.blog = blog
        self.workers = workers
        self.approver = approver
        self.first_day = first_day
        self.say = say
        self.publisher = Publisher(
            desk,
            blog_url=blog.base_url,
            platform=platform,
            call_timeout=call_timeout,
            settle_timeout=settle_timeout,
        )
        self.report = DriverReport()

    def run(self, runs: int) -> DriverReport:
        for index in range(runs):
            fault = FAULTS[index % len(FAULTS)]
            if fault == "worker_sigkill" and self.workers is None:
                self.report.skipped_faults[fault] += 1
                fault = "drop_after_commit"
            if fault == "approval" and self.approver is None:
                self.report.skipped_faults[fault] += 1
                fault = "none"
            day = (self.first_day + timedelta(days=index)).isoformat()
            self.report.scheduled_runs += 1
            self.report.faults[fault] += 1
            getattr(self, f"_{fault}")(day)
            self.say(f"run {index + 1}/{runs} ({day}): {fault}")
        self._count_effects()
        return self.report

    # -- one trigger, with what recovery should have answered ------------------------

    def _trigger(
        self,
        day: str,
        expected: tuple[str, str],
        *,
        sources: tuple[str, ...] | None = None,
        crash_after_call: bool = False,
    ) -> RunOutcome | None:
        trigger = Trigger(
            day=day,
            sources=sources or (f"feed:{day}:a", f"feed:{day}:b"),
            triggered_at=datetime.now(UTC),
        )
        self.report.triggers += 1
        outcome: RunOutcome | None
        try:
            outcome = self.publisher.run(trigger, crash_after_call=crash_after_call)
        except Crash as crash:
            outcome = None
            answered = crash.outcome
        else:
            answered = outcome
            self.report.escalated_runs += outcome.escalated
        got = (answered.decision, answered.reason)
        if got == expected:
            self.report.decisions_correct += 1
        else:
            self.report.wrong_decisions.append(f"{day}: expected {expected}, got {got}")
        # The driver knows the fault it injected, so it knows the right answer: it says so
        # to memdesk, whose recovery correctness must then equal the count above.
        if answered.answer_id is not None:
            self.desk.judge_recovery(answered.answer_id, expected[0])
        return outcome

    # -- the faults --------------------------------------------------------------------

    def _none(self, day: str) -> None:
        self._trigger(day, FRESH)

    def _crash_after_call(self, day: str) -> None:
        self._trigger(day, FRESH, crash_after_call=True)
        self._trigger(day, ("verify_only", "effect_unverified"))

    def _timeout(self, day: str) -> None:
        self.blog.fail_next_write(STALL_AFTER_COMMIT)
        self._trigger(day, FRESH)

    def _drop_after_commit(self, day: str) -> None:
        self.blog.fail_next_write(DROP_AFTER_COMMIT)
        self._trigger(day, FRESH)

    def _duplicate_trigger(self, day: str) -> None:
        self._trigger(day, FRESH)
        self._trigger(day, ("no_op", "already_verified"))

    def _concurrent_trigger(self, day: str) -> None:
        # Two runs of the same task triggered at once, each naming itself: the recovery
        # lease sends one to act and tells the other `in_progress`, never both `fresh`.
        self.blog.write_delay = 0.3
        start = threading.Barrier(2)
        outcomes: dict[str, RunOutcome] = {}

        def one(run: str) -> None:
            trigger = Trigger(
                day=day,
                sources=(f"feed:{day}:a", f"feed:{day}:b"),
                triggered_at=datetime.now(UTC),
                run_id=f"{day}:{run}",
            )
            start.wait()
            outcomes[run] = self.publisher.run(trigger)

        threads = [threading.Thread(target=one, args=(run,)) for run in ("first", "second")]
        try:
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        finally:
            self.blog.write_delay = 0.0
        self.report.triggers += len(outcomes)
        acted = [o for o in outcomes.values() if o.decision in ACTING]
        self.report.double_recoveries += len(acted) > 1
        for name, outcome in sorted(outcomes.items()):
            # The run that took the lease should have started fresh; the other, waited.
            expected = FRESH if outcome is (acted[0] if acted else None) else LEASE_HELD
            got = (outcome.decision, outcome.reason)
            if got == expected and len(acted) == 1:
                self.report.decisions_correct += 1
            else:
                self.report.wrong_decisions.append(
                    f"{day} ({name}): expected {expected}, got {got}"
                )
            if outcome.answer_id is not None:
                self.desk.judge_recovery(outcome.answer_id, expected[0])

    def _stale_input(self, day: str) -> None:
        self._trigger(day, FRESH)
        self.report.input_changes += 1
        # The sources changed after the checkpoint: the old plan must not be resumed.
        self._trigger(day, ("fresh", "input_changed"), sources=(f"feed:{day}:a", "feed:late"))

    def _approval(self, day: str) -> None:
        # The run writes under a policy asking for approval: its receipt waits until a
        # person approves the intent, and only then is the call made.
        assert self.approver is not None
        approver = self.approver
        done = threading.Event()

        def approve_when_asked() -> None:
            while not done.is_set():
                waiting = list(self.desk.iter_receipts(state="awaiting_approval"))
                for receipt in waiting:
                    approver.approve(str(receipt["id"]))
                if waiting:
                    return
                time.sleep(0.1)

        person = threading.Thread(target=approve_when_asked)
        self.publisher.operation = APPROVED_OPERATION
        person.start()
        try:
            outcome = self._trigger(day, FRESH)
        finally:
            done.set()
            person.join()
            self.publisher.operation = OPERATION
        if outcome is not None and outcome.approved:
            self.report.approved_calls += 1

    def _broken_verifier(self, day: str) -> None:
        # The blog's lookup breaks (404 for everything) and the write's connection drops:
        # memdesk must not believe the absence, or the run would publish the article twice.
        self.blog.answers_absent = True
        self.blog.fail_next_write(DROP_AFTER_COMMIT)
        try:
            outcome = self._trigger(day, FRESH)
        finally:
            self.blog.answers_absent = False
        if outcome is None:
            return
        self.report.safe_to_retry_while_broken += outcome.settled.count("safe_to_retry")
        if "manual_review" not in outcome.settled:
            return
        # Nobody can say whether the digest went out, and this operation's policy says to
        # undo a failed effect: the agent plans taking it down, and the next trigger is
        # told to carry that out instead of waiting for a person.
        effects = self.desk.iter_receipts(state="manual_review", operation=OPERATION)
        for effect in effects:
            if str(effect["idempotency_key"]).startswith(f"digest-{day}-"):
                self.publisher.plan_compensation(effect)
        undone = self._trigger(day, ("compensate", "compensation_planned"))
        if undone is not None:
            self.report.compensations += undone.compensated

    def _worker_sigkill(self, day: str) -> None:
        assert self.workers is not None
        self.blog.fail_next_write(DROP_AFTER_COMMIT)
        self.blog.read_delay = 1.0
        reads = self.blog.reads
        done = threading.Event()

        def trigger_then_signal() -> None:
            self._trigger(day, FRESH)
            done.set()

        thread = threading.Thread(target=trigger_then_signal)
        thread.start()
        try:
            deadline = time.monotonic() + 30
            while self.blog.reads == reads and time.monotonic() < deadline and not done.is_set():
                time.sleep(0.02)
            # The read is in flight: kill the worker making it, start another.
            self.workers.kill_and_replace()
        finally:
            self.blog.read_delay = 0.0
            thread.join()

    # -- what happened, seen from outside memdesk's metrics ----------------------------

    def _count_effects(self) -> None:
        self.report.published = self.blog.published()
        self.report.duplicate_side_effects = self.blog.duplicate_effects()
        articles = self.blog.article_ids()
        taken_down = {article.id for article in self.blog.deleted.values()}
        self.report.taken_down = len(taken_down)
        named: Counter[str] = Counter()
        for receipt in self.desk.iter_receipts(state="succeeded"):
            self.report.succeeded_receipts += 1
            detail: dict[str, Any] = dict(self.desk.get_receipt(receipt["id"]))
            external_id = str(detail.get("external_id") or "")
            if detail.get("kind") == "compensation":
                # A compensation names the article it took down, which must be gone.
                if external_id not in taken_down:
                    self.report.unpublished_receipts.append(str(receipt["id"]))
            elif external_id in articles.values():
                named[external_id] += 1
            else:
                self.report.unpublished_receipts.append(str(receipt["id"]))
            into = [t for t in detail.get("transitions", []) if t.get("to") == "succeeded"]
            by_agent = bool(into) and into[-1].get("actor", {}).get("kind") == "agent"
            if by_agent and not detail.get("external_id") and not into[-1].get("evidence"):
                self.report.unverified_completions += 1
        # A receipt waiting for a person never learned the article's id: it names the
        # article by the idempotency key the write carried.
        for receipt in self.desk.iter_receipts(state="manual_review"):
            article = articles.get(str(receipt.get("idempotency_key") or ""))
            if article is not None:
                named[article] += 1
                self.report.awaiting_a_person += 1
        # Every article is traced to exactly one receipt, and so to one run.
        self.report.untraced_articles = sorted(a for a in articles.values() if named[a] != 1)
