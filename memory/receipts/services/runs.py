"""Run snapshots: what a run started from, registered once and named by its effects.

`run_register` records the snapshot (secrets refused, nothing stored);
`run_named` is how receipts and checkpoints check the run they name.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.db import IntegrityError, transaction

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from common.problems import Problem
from common.screen import find_secrets_in_strings, find_secrets_in_value
from memory.receipts.models.runs import Run
from memory.receipts.selectors.runs import run_by_name, run_get

RUN_NOT_REGISTERED = "run_not_registered"
RUN_TARGET_TYPE = "run"


def _refuse_secrets(strings: dict[str, str], source_versions: dict[str, str]) -> None:
    findings = {name: find_secrets_in_strings([value]) for name, value in strings.items()}
    findings["source_versions"] = find_secrets_in_value(source_versions) + (
        find_secrets_in_strings(list(source_versions))
    )
    errors = {
        name: [f"Looks like a credential ({', '.join(sorted({f.kind for f in found}))})."]
        for name, found in findings.items()
        if found
    }
    if errors:
        raise Problem(
            "secret_detected",
            "The run snapshot contains what looks like a credential. Nothing was stored; send "
            "a digest of the inputs and a summary with the secret taken out.",
            errors=errors,
        )


def run_register(
    *,
    tenant: Tenant,
    actor: Actor,
    run_id: str,
    input_digest: str,
    summary: str = "",
    policy_version: str = "",
    source_versions: dict[str, str] | None = None,
    agent: str = "",
) -> tuple[Run, bool]:
    """Record the snapshot a run starts from; `(run, created)`.

    Registering the same `run_id` again with the same snapshot returns the first
    (a re-triggered start is harmless); with a different one it is `409
    run_id_reused`: a run's inputs never change after it started.
    """
    source_versions = dict(source_versions or {})
    _refuse_secrets(
        {
            "run_id": run_id,
            "agent": agent,
            "input_digest": input_digest,
            "summary": summary,
            "policy_version": policy_version,
        },
        source_versions,
    )
    snapshot = {
        "input_digest": input_digest,
        "summary": summary,
        "policy_version": policy_version,
        "source_versions": source_versions,
    }
    existing = run_by_name(tenant=tenant, run_id=run_id)
    if existing is not None:
        return _same_run(existing, actor, snapshot), False
    try:
        with transaction.atomic():
            run = Run.objects.create(
                tenant=tenant,
                run_id=run_id,
                token_id=actor.token_id,
                agent=agent or actor.label[:100],
                **snapshot,
            )
            audit_record(
                tenant=tenant,
                actor=actor,
                verb="run.registered",
                target_type=RUN_TARGET_TYPE,
                target_id=run.pk,
                data={
                    "run_id": run_id,
                    "input_digest": input_digest,
                    "policy_version": policy_version,
                },
            )
    except IntegrityError:
        existing = run_by_name(tenant=tenant, run_id=run_id)
        if existing is None:
            raise
        return _same_run(existing, actor, snapshot), False
    return run, True


def _same_run(existing: Run, actor: Actor, snapshot: dict[str, Any]) -> Run:
    visible = run_get(tenant=existing.tenant, actor=actor, run_pk=existing.pk)
    if visible is None:
        # Another token's run: refuse the name and say nothing of the run behind it.
        raise Problem(
            "run_id_reused",
            "This run_id already names another run. Name the new run anew.",
            status_code=409,
        )
    if any(getattr(existing, name) != value for name, value in snapshot.items()):
        raise Problem(
            "run_id_reused",
            "This run_id already names a run with another snapshot (inputs, summary, policy "
            "or source versions). A run's snapshot never changes: name the new run anew.",
            status_code=409,
            run=str(existing.pk),
        )
    return existing


def run_named(
    *, tenant: Tenant, actor: Actor, run: UUID | str | None, run_id: str
) -> tuple[Run | None, str]:
    """The registered run a receipt or checkpoint names, and the `run_id` it then carries.

    `run` must be a run `actor` reaches (else `400 run_not_registered`); a `run_id`
    given with it must be that run's (else the same problem): a receipt cannot claim
    one run and name another.
    """
    if run is None:
        return None, run_id
    found = run_get(tenant=tenant, actor=actor, run_pk=run)
    if found is None:
        raise Problem(
            RUN_NOT_REGISTERED,
            "No such run is registered for this token: register it with POST /api/v1/runs "
            "first, and name it by the id that answered.",
            errors={"run": ["Not a registered run."]},
        )
    if run_id and run_id != found.run_id:
        raise Problem(
            RUN_NOT_REGISTERED,
            f"`run_id` names another run than `run` (registered as `{found.run_id}`).",
            errors={"run_id": [f"Leave it out, or send `{found.run_id}`."]},
        )
    return found, found.run_id
