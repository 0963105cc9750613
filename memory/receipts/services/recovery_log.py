"""Writing recovery's log: each answer as it is given, and verdicts on answers.

The log is what recovery leaves behind instead of changing state (models/recovery_log.py);
the figures computed from it are in selectors/recovery_log.py.
"""

from __future__ import annotations

from django.db import transaction

from accounts.actors import Actor
from accounts.models import ActorKind, Tenant
from accounts.services import audit_record
from common.problems import Problem, not_found
from memory.receipts.models.recovery_log import RecoveryAnswerRecord, RecoveryVerdict, VerdictSource
from memory.receipts.selectors.recovery_log import recovery_answer_get

# Latencies outside [0, a day] are a clock's error, not a wait: the answer is logged
# without being timed from the trigger.
MAX_LATENCY_SECONDS = 86_400.0


def recovery_answer_log(
    *,
    tenant: Tenant,
    actor: Actor,
    task_key: str,
    run_id: str,
    decision: str,
    reason: str,
    folded: bool,
    decided_seconds: float,
    since_trigger_seconds: float | None,
) -> RecoveryAnswerRecord:
    """Log one answer. Its latency runs from the run's trigger when the agent said when
    that was (and the clocks agree), otherwise from when memdesk started deciding."""
    from_trigger = (
        since_trigger_seconds is not None and 0 <= since_trigger_seconds <= MAX_LATENCY_SECONDS
    )
    latency = since_trigger_seconds if from_trigger else decided_seconds
    return RecoveryAnswerRecord.objects.create(
        tenant=tenant,
        task_key=task_key,
        run_id=run_id,
        token_id=actor.token_id,
        decision=decision,
        reason=reason,
        folded=folded,
        latency_seconds=max(0.0, latency or 0.0),
        from_trigger=from_trigger,
    )


def recovery_verdict_record(
    *, tenant: Tenant, actor: Actor, answer_id: int, expected: str, note: str = ""
) -> RecoveryVerdict:
    """Say what recovery should have answered. An agent's verdict is a replay's, a
    person's a review's; a person overturning an answer says why."""
    answer = recovery_answer_get(tenant=tenant, actor=actor, answer_id=answer_id)
    if answer is None:
        raise not_found("recovery answer")
    source = VerdictSource.REPLAY if actor.kind == ActorKind.AGENT else VerdictSource.PERSON
    note = note.strip()
    if source == VerdictSource.PERSON and expected != answer.decision and not note:
        raise Problem(
            "note_required",
            "Say why the answer was wrong: overturning a recovery answer needs a note.",
            errors={"note": ["Required when the expected decision differs from the answer."]},
        )
    with transaction.atomic():
        verdict = RecoveryVerdict.objects.create(
            tenant=tenant,
            answer=answer,
            expected=expected,
            source=source,
            note=note,
            actor_kind=actor.kind,
            actor_id=actor.id,
            actor_label=actor.label,
        )
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="recovery.confirmed" if expected == answer.decision else "recovery.overturned",
            target_type="recovery_answer",
            target_id=answer.pk,
            reason=note,
            data={"decision": answer.decision, "expected": expected, "source": source},
        )
    return verdict
