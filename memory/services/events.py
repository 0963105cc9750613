from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction

from accounts.actors import Actor
from accounts.models import Tenant
from common.fingerprints import fingerprint
from common.problems import Problem
from common.screen import find_secrets_in_strings, find_secrets_in_value
from memory.models import Event
from memory.services.subjects import subject_resolve


def event_record(
    *,
    tenant: Tenant,
    actor: Actor,
    subject_key: str,
    kind: str,
    observed_at: datetime,
    text: str = "",
    body: dict[str, Any] | None = None,
    run_id: str = "",
    agent: str = "",
    source_uri: str = "",
    sensitivity: str = "normal",
    echo_of: list[Any] | None = None,
) -> Event:
    """Append one observation to the ledger. Credentials are refused, never stored."""
    body = body or {}
    # Every string the agent sent; injections are not refused here: the ledger
    # records what was observed, and the claim gate judges what becomes memory.
    findings = find_secrets_in_strings(
        [subject_key, run_id, agent, kind, text, source_uri]
    ) + find_secrets_in_value(body)
    if findings:
        raise Problem(
            "secret_detected",
            "The event contains a credential ("
            + ", ".join(sorted({f.kind for f in findings}))
            + "). Remove it and send the event again; nothing was stored.",
        )
    with transaction.atomic():
        subject = subject_resolve(tenant=tenant, key=subject_key)
        return Event.objects.create(
            tenant=tenant,
            subject=subject,
            run_id=run_id,
            agent=agent or actor.label,
            kind=kind,
            text=text,
            body=body,
            source_uri=source_uri,
            observed_at=observed_at,
            digest=fingerprint(
                {
                    "subject": subject.key,
                    "kind": kind,
                    "text": text,
                    "body": body,
                    "source_uri": source_uri,
                    "observed_at": observed_at.isoformat(),
                }
            ),
            sensitivity=sensitivity,
            echo_of=echo_of or [],
            token_id=int(actor.id) if actor.kind == "agent" else None,
        )
