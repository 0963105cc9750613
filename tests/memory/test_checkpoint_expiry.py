"""Every checkpoint expires: the tenant's default lifetime when the agent names none,
`resume_after` as a back-off, expired checkpoints ignored by recovery and swept by a
real Celery worker."""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta
from typing import Any

import pytest
from celery import current_app
from django.core.management import call_command
from django.utils import timezone

from accounts.models import AuditEvent
from memory.receipts.models import Checkpoint
from tests.memory.test_reconcile_workers import wait_for
from tests.test_memory_split_migration import migrate

FINGERPRINT = "sha256:inputs"


def save(agent, task_key: str, **fields: Any):
    return agent.put(
        f"/api/v1/checkpoints/{task_key}",
        {"input_fingerprint": FINGERPRINT, "stage": "build", **fields},
        format="json",
    )


def ask(agent, task_key: str) -> dict[str, Any]:
    response = agent.post(
        "/api/v1/recovery", {"task_key": task_key, "input_fingerprint": FINGERPRINT}, format="json"
    )
    assert response.status_code == 200, response.json()
    return response.json()


def at(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


@pytest.mark.django_db
def test_a_save_without_expiry_gets_the_installation_default(agent, settings):
    settings.CHECKPOINT_DEFAULT_TTL_SECONDS = 3600
    before = timezone.now()
    saved = save(agent, "t")
    assert saved.status_code == 200, saved.json()
    expires = at(saved.json()["expires_at"])
    assert before + timedelta(seconds=3600) <= expires <= timezone.now() + timedelta(seconds=3600)
    assert saved.json()["resume_after"] is None


@pytest.mark.django_db
def test_the_tenants_own_default_wins_and_an_explicit_expiry_wins_over_both(
    agent, acme, globex_agent
):
    call_command("set_checkpoint_ttl", "--tenant", acme.slug, "--seconds", "120")
    assert AuditEvent.objects.get(tenant=acme, verb="checkpoint.ttl_set").data["ttl_seconds"] == 120
    mine = at(save(agent, "t").json()["expires_at"])
    assert mine <= timezone.now() + timedelta(seconds=120)
    # Another tenant keeps the installation's default.
    theirs = at(save(globex_agent, "t").json()["expires_at"])
    assert theirs > timezone.now() + timedelta(hours=1)
    chosen = timezone.now() + timedelta(days=3)
    explicit = save(agent, "t", expires_at=chosen.isoformat())
    assert at(explicit.json()["expires_at"]) == chosen
    # An explicit null is the same as leaving it out.
    assert at(save(agent, "t", expires_at=None).json()["expires_at"]) <= mine + timedelta(minutes=1)


@pytest.mark.django_db
def test_a_bad_default_is_refused(acme):
    with pytest.raises(Exception, match="validation_error"):
        call_command("set_checkpoint_ttl", "--tenant", acme.slug, "--seconds", "0")
    assert not AuditEvent.objects.filter(verb="checkpoint.ttl_set").exists()


@pytest.mark.django_db
def test_resume_after_holds_recovery_at_wait_until_then(agent):
    later = timezone.now() + timedelta(minutes=10)
    saved = save(agent, "backoff", retry_count=1, resume_after=later.isoformat())
    assert at(saved.json()["resume_after"]) == later
    answer = ask(agent, "backoff")
    assert (answer["decision"], answer["reason"]) == ("wait", "resume_after")
    # Between stages too.
    save(
        agent, "between", stage_complete=True, allowed_next_stages=["publish"],
        resume_after=later.isoformat(),
    )  # fmt: skip
    assert ask(agent, "between")["decision"] == "wait"
    # Once the time has passed, the usual answer.
    save(
        agent,
        "backoff",
        retry_count=1,
        resume_after=(timezone.now() - timedelta(seconds=1)).isoformat(),
    )
    assert (ask(agent, "backoff")["decision"]) == "resume"
    # A wait is nothing to act on: no lease is taken for it.
    save(agent, "backoff", retry_count=1, resume_after=later.isoformat())
    leased = agent.post(
        "/api/v1/recovery",
        {"task_key": "backoff", "input_fingerprint": FINGERPRINT, "run_id": "r1"},
        format="json",
    ).json()
    assert (leased["decision"], leased["lease"]) == ("wait", None)


@pytest.mark.django_db
def test_resume_after_past_the_expiry_is_refused_and_changes_nothing(agent):
    save(agent, "t", stage="draft")
    soon = timezone.now() + timedelta(minutes=5)
    refused = save(
        agent, "t", expires_at=soon.isoformat(),
        resume_after=(soon + timedelta(minutes=1)).isoformat(),
    )  # fmt: skip
    assert refused.status_code == 400
    assert "resume_after" in refused.json()["errors"]
    assert Checkpoint.objects.get(task_key="t").stage == "draft"


@pytest.mark.django_db
def test_an_expired_checkpoint_is_ignored_by_recovery(agent):
    save(
        agent, "old", retry_count=1,
        expires_at=(timezone.now() - timedelta(seconds=1)).isoformat(),
    )  # fmt: skip
    assert (ask(agent, "old")["decision"], ask(agent, "old")["reason"]) == (
        "fresh",
        "checkpoint_expired",
    )


def test_a_worker_sweeps_expired_checkpoints_and_keeps_live_ones(
    celery_workers, agent, globex_agent, acme
):
    celery_workers.start()
    past = (timezone.now() - timedelta(seconds=1)).isoformat()
    for n in range(3):
        save(agent, f"old-{n}", expires_at=past)
    save(globex_agent, "old-globex", expires_at=past)
    save(agent, "live")
    assert Checkpoint.objects.count() == 5

    current_app.send_task("memory.checkpoints_sweep_expired", queue=celery_workers.queue)
    wait_for(lambda: Checkpoint.objects.count() == 1, timeout=60)
    assert list(Checkpoint.objects.values_list("task_key", flat=True)) == ["live"]
    swept = AuditEvent.objects.filter(verb="checkpoint.expired_swept")
    assert sorted(event.data["checkpoints"] for event in swept) == [1, 3]
    assert swept.get(tenant=acme).actor_label == "checkpoint sweep"
    # A swept task is one nobody saved: start fresh.
    assert ask(agent, "old-0")["reason"] == "no_checkpoint"

    # Running again finds nothing left to sweep and records nothing.
    current_app.send_task("memory.checkpoints_sweep_expired", queue=celery_workers.queue)
    save(agent, "expiring", expires_at=(timezone.now() + timedelta(seconds=2)).isoformat())
    worker = celery_workers.started[0]
    wait_for(lambda: len(re.findall(r"succeeded in [\d.]+s: 0\b", worker.log())) == 1, 30)
    time.sleep(2)
    current_app.send_task("memory.checkpoints_sweep_expired", queue=celery_workers.queue)
    wait_for(lambda: not Checkpoint.objects.filter(task_key="expiring").exists(), timeout=60)
    assert list(Checkpoint.objects.values_list("task_key", flat=True)) == ["live"]
    assert AuditEvent.objects.filter(verb="checkpoint.expired_swept").count() == 3


@pytest.mark.django_db(transaction=True)
def test_checkpoints_saved_without_expiry_get_the_default_from_their_last_save(settings):
    before_expiry = [("memory", "0028_recovery_lease")]
    try:
        old = migrate(before_expiry)
        tenant = old.get_model("accounts", "Tenant").objects.create(slug="acme", name="Acme")
        saved_at = timezone.now() - timedelta(hours=30)
        model = old.get_model("memory", "Checkpoint")
        for key, expires in (("open-ended", None), ("dated", saved_at + timedelta(hours=1))):
            model.objects.create(
                tenant=tenant, task_key=key, input_fingerprint="i", stage="build",
                updated_at=saved_at, expires_at=expires,
            )  # fmt: skip
        migrate(None)
        expiries = dict(Checkpoint.objects.values_list("task_key", "expires_at"))
        default = timedelta(seconds=settings.CHECKPOINT_DEFAULT_TTL_SECONDS)
        assert expiries == {
            "open-ended": saved_at + default,
            "dated": saved_at + timedelta(hours=1),
        }
    finally:
        migrate(None)
