"""Recovery after a crash, timeout or second trigger: replays of the seed's twenty runs
(five each of duplicate trigger, unverified effect, changed source and failed build), the
escalations, and proof that asking changes no row anywhere."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from memory.receipts.models.receipts import Receipt, ReceiptState
from memory.receipts.models.recovery_log import RecoveryAnswerRecord
from memory.receipts.selectors.recovery_log import recovery_decision_counts
from memory.receipts.services.receipt_reads import receipt_reconcile_claim
from memory.receipts.services.receipts import receipt_resolve_manual, receipt_transition
from memory.receipts.services.recovery import (
    RECOVERY_OUTCOMES,
    recovery_rule,
)

pytestmark = pytest.mark.django_db

FINGERPRINT = "sha256:inputs-of-2026-08-16"
S = ReceiptState


@dataclass(frozen=True)
class Replay:
    """One recorded run: the checkpoint it left and the state of its effects now."""

    name: str
    effects: tuple[str, ...]
    expected: tuple[str, str]
    checkpoint: dict[str, Any] = field(default_factory=dict)
    asked_with: str = FINGERPRINT


def _complete(stage: str = "verify", **extra: Any) -> dict[str, Any]:
    return {"stage": stage, "stage_complete": True, **extra}


def _build_failed(retry_count: int, **extra: Any) -> dict[str, Any]:
    return {"stage": "build", "stage_complete": False, "retry_count": retry_count, **extra}


NO_OP = ("no_op", "already_verified")
VERIFY = ("verify_only", "effect_unverified")
CHANGED = ("fresh", "input_changed")
RESUME = ("resume", "incomplete_stage")

REPLAYS = [
    # Five duplicate triggers after a verified effect.
    Replay("duplicate trigger, agent verified the publish", (S.SUCCEEDED,), NO_OP, _complete()),
    Replay("duplicate trigger, two verified effects", (S.SUCCEEDED, S.SUCCEEDED), NO_OP,
           _complete("deploy")),
    Replay("duplicate trigger after reconciliation found it", ("reconciled",), NO_OP, _complete()),
    Replay("duplicate trigger after an editor confirmed it", ("confirmed",), NO_OP, _complete()),
    Replay("duplicate trigger of a stage without effects", (), NO_OP, _complete("report")),
    # Five effects committed but not verified.
    Replay("push sent, no answer yet", (S.SUBMITTED,), VERIFY, _complete("push")),
    Replay("deploy timed out", (S.OUTCOME_UNKNOWN,), VERIFY, {"stage": "deploy"}),
    Replay("reconciliation under way", ("claimed",), VERIFY, {"stage": "deploy"}),
    Replay("commit verified, push unknown", (S.SUCCEEDED, S.OUTCOME_UNKNOWN), VERIFY,
           _complete("push")),
    Replay("unknown effect, budget spent", (S.OUTCOME_UNKNOWN,), VERIFY,
           {"stage": "deploy", "retry_count": 3, "max_retries": 3}),
    # Five source changes.
    Replay("source updated after publish", (S.SUCCEEDED,), CHANGED, _complete(),
           asked_with="sha256:new-source"),
    Replay("source updated mid-draft", (), CHANGED, {"stage": "draft"}, "sha256:v2"),
    Replay("source updated while deploy unknown", (S.OUTCOME_UNKNOWN,), CHANGED,
           {"stage": "deploy"}, "sha256:v3"),
    Replay("source updated after a failed build", (), CHANGED, _build_failed(1), "sha256:v4"),
    Replay("policy version changed", (S.SUCCEEDED,), CHANGED, _complete("verify"),
           "sha256:policy-2"),
    # Five failed builds with retries left.
    Replay("first build failed", (), RESUME, _build_failed(0)),
    Replay("second build failed", (), RESUME, _build_failed(1)),
    Replay("build failed, publish was refused", (S.REJECTED,), RESUME, _build_failed(1)),
    Replay("build failed, retry proven safe", (S.SAFE_TO_RETRY,), RESUME, _build_failed(2)),
    Replay("build failed before the call", (S.PLANNED,), RESUME, _build_failed(2, max_retries=5)),
    # Escalations.
    Replay("retry budget exhausted", (), ("escalate", "retry_budget_exhausted"),
           _build_failed(3, max_retries=3)),
    Replay("effect waits for a person", (S.MANUAL_REVIEW,), ("escalate", "effect_in_manual_review"),
           {"stage": "deploy"}),
    Replay("a person outranks unknown effects", (S.MANUAL_REVIEW, S.OUTCOME_UNKNOWN),
           ("escalate", "effect_in_manual_review"), _complete("deploy")),
    # Between two stages.
    Replay("crashed between build and publish", (S.SUCCEEDED,), ("resume", "next_stage"),
           _complete("build", allowed_next_stages=["publish"])),
]  # fmt: skip


@pytest.fixture
def effect_in(make_receipt, actors) -> Callable[[str], Receipt]:
    """A receipt in a state, or settled along a particular route."""

    def make(kind: str) -> Receipt:
        if kind == "reconciled":
            receipt = make_receipt(S.RECONCILING)
            return receipt_transition(
                tenant=receipt.tenant,
                receipt_id=receipt.pk,
                actor=actors.worker,
                to=S.SUCCEEDED,
                external_id="art_9",
            )
        if kind == "confirmed":
            receipt = make_receipt(S.MANUAL_REVIEW)
            return receipt_resolve_manual(
                tenant=receipt.tenant,
                receipt_id=receipt.pk,
                actor=actors.editor,
                verdict=S.SUCCEEDED,
                reason="seen live on the blog",
                external_id="art_5",
            )
        if kind == "claimed":
            receipt = make_receipt(S.OUTCOME_UNKNOWN)
            assert receipt_reconcile_claim(receipt_id=receipt.pk, worker=actors.worker)
            receipt.refresh_from_db()
            assert receipt.state == S.RECONCILING
            return receipt
        return make_receipt(kind)

    return make


def ask(agent, task_key: str, fingerprint: str = FINGERPRINT, **headers: str) -> dict[str, Any]:
    response = agent.post(
        "/api/v1/recovery",
        {"task_key": task_key, "input_fingerprint": fingerprint},
        format="json",
        **headers,
    )
    assert response.status_code == 200, response.json()
    return response.json()


def replay_run(agent, effect_in, replay: Replay) -> tuple[list[Receipt], str]:
    """Leave the run's checkpoint and effects behind, as the crashed run did."""
    effects = [effect_in(kind) for kind in replay.effects]
    task_key = "replay:" + replay.name.replace(" ", "-")
    saved = agent.put(
        f"/api/v1/checkpoints/{task_key}",
        {
            "run_id": "run-1",
            "input_fingerprint": FINGERPRINT,
            "max_retries": 3,
            **replay.checkpoint,
            "effects": [str(e.pk) for e in effects],
        },
        format="json",
    )
    assert saved.status_code == 200, saved.json()
    return effects, task_key


@pytest.mark.parametrize("replay", REPLAYS, ids=[r.name for r in REPLAYS])
def test_recovery_replays(replay, agent, effect_in):
    effects, task_key = replay_run(agent, effect_in, replay)
    answers = [ask(agent, task_key, replay.asked_with) for _ in range(3)]
    # Asking again changes nothing: the same answer, each logged under its own id.
    logged = [answer.pop("answer_id") for answer in answers]
    assert answers[0] == answers[1] == answers[2] and len(set(logged)) == 3
    answer = answers[0]
    assert (answer["decision"], answer["reason"]) == replay.expected
    assert answer["checkpoint"]["task_key"] == task_key
    assert [e["id"] for e in answer["effects"]] == [str(e.pk) for e in effects]
    assert [e["state"] for e in answer["effects"]] == [
        Receipt.objects.get(pk=e.pk).state for e in effects
    ]


def test_the_seed_runs_side_by_side_get_the_decisions_the_seed_asks_for(acme, agent, effect_in):
    # All runs live in one tenant at once, as after a real outage: each answer
    # must depend on its own checkpoint and effects only. The seed asks for five
    # runs of each kind; the tally is of what the endpoint answered.
    before = recovery_decision_counts(tenant=acme)
    runs = [(replay, replay_run(agent, effect_in, replay)[1]) for replay in REPLAYS]
    answered = {}
    for replay, task_key in runs:
        answer = ask(agent, task_key, replay.asked_with)
        answered[replay.name] = (answer["decision"], answer["reason"])
    assert answered == {replay.name: replay.expected for replay in REPLAYS}
    tally = Counter(answered.values())
    assert min(tally[NO_OP], tally[VERIFY], tally[CHANGED], tally[RESUME]) >= 5
    assert tally[("escalate", "retry_budget_exhausted")] >= 1
    assert tally[("escalate", "effect_in_manual_review")] >= 1
    # The dashboard's counters saw the same answers, one per question.
    after = recovery_decision_counts(tenant=acme)
    assert {pair: after[pair] - before[pair] for pair in tally} == dict(tally)


def test_without_a_checkpoint_start_fresh(agent):
    answer = ask(agent, "never-ran")
    assert isinstance(answer.pop("answer_id"), int)
    assert answer == {
        "decision": "fresh",
        "reason": "no_checkpoint",
        "checkpoint": None,
        "effects": [],
        "lease": None,
        "folded": False,
        "compensations": [],
    }


def test_an_expired_checkpoint_means_start_fresh(agent, make_receipt):
    receipt = make_receipt(S.OUTCOME_UNKNOWN)
    agent.put(
        "/api/v1/checkpoints/old",
        {
            "input_fingerprint": FINGERPRINT,
            "stage": "deploy",
            "effects": [str(receipt.pk)],
            "expires_at": (timezone.now() - timedelta(minutes=1)).isoformat(),
        },
        format="json",
    )
    answer = ask(agent, "old")
    assert (answer["decision"], answer["reason"]) == ("fresh", "checkpoint_expired")


def test_another_tenants_checkpoint_is_invisible(agent, globex_agent):
    agent.put(
        "/api/v1/checkpoints/shared-name",
        {"input_fingerprint": FINGERPRINT, "stage": "verify", "stage_complete": True},
        format="json",
    )
    assert ask(globex_agent, "shared-name")["reason"] == "no_checkpoint"
    assert ask(agent, "shared-name")["reason"] == "already_verified"


def test_recovery_accepts_either_capability(acme, make_agent):
    for capabilities in (["checkpoints:write"], ["receipts:write"]):
        client = make_agent(acme, name="+".join(capabilities), capabilities=capabilities)
        assert ask(client, "t")["decision"] == "fresh"
    outsider = make_agent(acme, name="recall-only", capabilities=["recall"])
    refused = outsider.post(
        "/api/v1/recovery", {"task_key": "t", "input_fingerprint": "f"}, format="json"
    )
    assert refused.status_code == 403
    assert refused.json()["code"] == "capability_required"
    assert refused.json()["capabilities"] == ["checkpoints:write", "receipts:write"]


def test_every_rule_outcome_is_a_known_metric_label():
    assert len(set(RECOVERY_OUTCOMES)) == len(RECOVERY_OUTCOMES)
    assert recovery_rule(
        checkpoint=None, effects=[], input_fingerprint="f", now=timezone.now()
    ) in (RECOVERY_OUTCOMES)


# -- read-only ---------------------------------------------------------------------------


# What asking may leave: one row in recovery's log per answer (and its id sequence).
RECOVERY_LOG = RecoveryAnswerRecord._meta.db_table


def database_snapshot() -> dict[str, Any]:
    """Every row of every table but recovery's log, with the physical tuple it lives in
    (ctid, xmin): an UPDATE that rewrites a row with the same values still shows up, as
    do sequences."""
    snapshot: dict[str, Any] = {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> %s",
            [RECOVERY_LOG],
        )
        for (table,) in cursor.fetchall():
            cursor.execute(
                f"SELECT count(*), md5(coalesce(string_agg(t.ctid::text || t.xmin::text || "  # noqa: S608
                f"(t.*)::text, ',' ORDER BY t.ctid), '')) FROM \"{table}\" t"
            )
            snapshot[table] = cursor.fetchone()
        cursor.execute(
            "SELECT sequencename, last_value FROM pg_sequences WHERE schemaname = 'public' "
            "AND sequencename NOT LIKE %s",
            [f"{RECOVERY_LOG}%"],
        )
        snapshot["sequences"] = sorted(cursor.fetchall(), key=str)
    return snapshot


def test_asking_for_recovery_changes_no_row_however_often(agent, make_receipt, actors):
    states = [S.SUCCEEDED, S.OUTCOME_UNKNOWN, S.MANUAL_REVIEW, S.SUBMITTED, S.SAFE_TO_RETRY]
    effects = [make_receipt(state) for state in states]
    for n, effect in enumerate(effects):
        agent.put(
            f"/api/v1/checkpoints/task-{n}",
            {
                "input_fingerprint": FINGERPRINT,
                "stage": "deploy",
                "stage_complete": n % 2 == 0,
                "retry_count": n,
                "effects": [str(effect.pk)],
                "expires_at": (timezone.now() + timedelta(days=1)).isoformat(),
            },
            format="json",
        )
    # Authenticating a token stamps its last use at most once a minute; make
    # that stamp happen now, so the snapshot sees only what recovery does.
    agent.get("/api/v1/receipts")
    before = database_snapshot()
    counts_before = recovery_decision_counts()
    asked = 0
    for round_ in range(10):
        for n in range(len(effects) + 1):
            fingerprint = FINGERPRINT if round_ % 3 else "sha256:other"
            ask(agent, f"task-{n}", fingerprint, HTTP_IDEMPOTENCY_KEY=f"recover-{round_}-{n}")
            asked += 1
    assert database_snapshot() == before
    counts_after = recovery_decision_counts()
    # Every answer was logged, once.
    assert sum(counts_after.values()) - sum(counts_before.values()) == asked


def test_decisions_are_counted_by_decision_and_reason(agent, client):
    before = recovery_decision_counts()[("fresh", "no_checkpoint")]
    for _ in range(3):
        ask(agent, "nothing-here")
    assert recovery_decision_counts()[("fresh", "no_checkpoint")] == before + 3
    body = client.get("/metrics").content.decode()
    labels = 'decision="fresh",reason="no_checkpoint"'
    assert f"memdesk_recovery_decisions_total{{{labels}}} {before + 3}.0" in body
