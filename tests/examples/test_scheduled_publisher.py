"""The reference agent against a live memdesk and real Celery workers: every fault of the
driver, and the reliability figures as the driver saw them, on /metrics and the dashboard."""

from __future__ import annotations

import re
import threading

import pytest
from memdesk_client import Desk

from accounts.actors import Actor
from accounts.models import Role
from accounts.services import agent_token_create
from examples.scheduled_publisher.driver import FAULTS, Driver, read_metrics
from examples.scheduled_publisher.platform import FakeBlog
from examples.scheduled_publisher.publisher import APPROVED_OPERATION
from memory.receipts.models import Receipt
from memory.receipts.services.platforms import operation_policy_set, platform_register
from memory.receipts.services.verifier_controls import platform_controls_set
from memory.receipts.tasks import dispatch_due_reconciliations
from tests.memory.conftest import celery_workers  # noqa: F401 - a fixture

pytestmark = pytest.mark.slow


class Workers:
    def __init__(self, workers) -> None:
        self.workers = workers
        self.kills = 0

    def kill_and_replace(self) -> None:
        self.workers.started[-1].kill()
        self.kills += 1
        self.workers.start().wait_ready()


class SessionApprover:
    """A person other than the token's owner approving in the approvals queue (the API)."""

    def __init__(self, client) -> None:
        self.client = client

    def approve(self, receipt_id: str) -> None:
        items = self.client.get("/api/v1/reviews?queue=approvals").json()["results"]
        for item in items:
            if item["target_id"] == receipt_id and item["status"] in {"open", "claimed"}:
                decided = self.client.post(
                    f"/api/v1/reviews/{item['id']}/decide",
                    {"verdict": "approve", "reason_code": "intent_checked"},
                    format="json",
                )
                assert decided.status_code == 200, decided.json()


@pytest.fixture
def beat(celery_workers):  # noqa: F811
    """Celery beat's part: wake the workers for due receipts every half second."""
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(0.5):
            dispatch_due_reconciliations.apply_async(queue=celery_workers.queue)

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    yield
    stop.set()
    thread.join()


def test_the_publisher_survives_every_fault_and_memdesk_counts_what_happened(
    live_server,
    celery_workers,  # noqa: F811
    beat,
    acme,
    make_member,
    login,
    session_api,
):
    celery_workers.start().wait_ready()
    blog = FakeBlog(stall_seconds=2.5).start()
    try:
        setup = Actor.system("test setup")
        platform_register(
            tenant=acme,
            actor=setup,
            name="blog",
            base_url=blog.base_url,
            allow_private=True,
            absence_proof="status_lookup",
            lookup_template="articles?key={idempotency_key}",
            key_retention_seconds=86400,
        )
        blog.keep_control("control-kept")
        platform_controls_set(
            tenant=acme,
            actor=setup,
            name="blog",
            known_absent_key="control-never-written",
            known_present_key="control-kept",
        )
        for operation, approval in (("articles.create", False), (APPROVED_OPERATION, True)):
            operation_policy_set(
                tenant=acme,
                actor=setup,
                platform="blog",
                operation=operation,
                require_external_id=True,
                evidence_fields=["url"],
                approval_required=approval,
                compensate_on_failure=not approval,
            )
        token = agent_token_create(
            tenant=acme,
            name="publisher",
            capabilities=["receipts:write", "checkpoints:write"],
            allowed_subjects=[],
            max_authority="agent_inferred",
        ).secret
        workers = Workers(celery_workers)
        with Desk(live_server.url, token) as desk:
            driver = Driver(
                desk,
                blog,
                platform="blog",
                workers=workers,
                approver=SessionApprover(session_api(make_member(acme, "ada", Role.EDITOR))),
                settle_timeout=45,
            )
            report = driver.run(len(FAULTS))
            report.memdesk = read_metrics(live_server.url, "acme")
    finally:
        blog.stop()

    assert workers.kills == 1
    assert report.faults == dict.fromkeys(FAULTS, 1)
    assert report.wrong_decisions == []
    assert report.decisions_correct == report.triggers == 15
    # The driver's replay verdicts reached memdesk: every answer judged, every one right.
    assert report.memdesk.recovery_answers_judged == report.memdesk.recovery_answers_correct == 15
    # The approval run's call was made only after a person approved its intent.
    assert report.approved_calls == 1
    approved = Receipt.objects.get(operation=APPROVED_OPERATION)
    moves = list(approved.transitions.order_by("id").values_list("to_state", "actor_kind"))
    assert [state for state, _ in moves[:4]] == [
        "planned",
        "awaiting_approval",
        "planned",
        "submitted",
    ]
    assert moves[2][1] == "user"  # approved by the person, then submitted by the agent
    # Two triggers at once: the lease sent one run to act and told the other to wait.
    assert report.double_recoveries == 0
    # The broken verifier's run went to a person instead of publishing again; its
    # planned compensation then took the article down on the next trigger.
    assert report.escalated_runs == 1
    assert report.safe_to_retry_while_broken == 0
    assert report.compensations == report.taken_down == 1
    assert report.awaiting_a_person == 0
    assert report.duplicate_side_effects == 0
    assert report.unverified_completions == 0
    # One article per scheduled run and the stale-input run's second version, less the
    # one taken down.
    assert report.published == len(FAULTS)
    assert report.untraced_articles == [] and report.unpublished_receipts == []
    assert report.mismatches == [], report.lines()
    memdesk = report.memdesk
    assert memdesk.duplicate_side_effects == memdesk.unverified_completions == 0
    # Reads settled the crash, the timeout, both dropped connections and the killed read;
    # the absence read through the broken verifier went to a person.
    assert memdesk.reconciliation_outcomes["succeeded"] == 4
    assert memdesk.reconciliation_outcomes["manual_review"] == 1
    assert memdesk.reconciliation_outcomes.get("safe_to_retry", 0) == 0
    assert memdesk.recovery_latency_p50 is not None

    html = login(make_member(acme, "erin", Role.EDITOR)).get("/dashboard/").content.decode()
    shown = dict(re.findall(r'data-metric="(\w+)">([^<]*)<', html))
    assert float(shown["duplicate_side_effect_rate"]) == 0
    assert float(shown["unverified_completion_rate"]) == memdesk.unverified_completion_rate
    assert f"0 of {memdesk.completions:g} completions" in html
    assert shown["recovery_latency"].startswith(f"{memdesk.recovery_latency_p50:.3f} s")
