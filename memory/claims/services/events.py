from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from common.fingerprints import fingerprint
from common.problems import Problem
from common.screen import find_secrets_in_strings, find_secrets_in_value, strings_in
from memory.claims.consent import consented_classes
from memory.claims.future_times import refuse_future_times
from memory.claims.models import Event, Sensitivity
from memory.claims.sensitivity import classify, find_ephemeral
from memory.claims.services.echoes import echoes_of
from memory.claims.services.embeddings import event_embeddings_enqueue_on_commit
from memory.claims.services.protocol_events import ProtocolFields, protocol_fields_checked
from memory.claims.services.subjects import subject_resolve


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
    sensitivity: str = Sensitivity.NORMAL,
    echo_of: list[Any] | None = None,
    protocol: ProtocolFields | None = None,
) -> Event:
    """Append one observation to the ledger.

    An `observed_at` in the future is refused (see `memory.claims.future_times`).
    Credentials and ephemeral values are refused, never stored; so is content
    of a sensitive class the subject has not consented to. The event keeps the
    stronger of the rules' class and the agent's `sensitivity`.
    """
    refuse_future_times({"observed_at": observed_at})
    protocol = protocol_fields_checked(kind=kind, fields=protocol or ProtocolFields())
    body = body or {}
    # Every string the agent sent; injections are not refused here: the ledger
    # records what was observed, and the claim gate judges what becomes memory.
    findings = find_secrets_in_strings(
        [subject_key, run_id, agent, kind, text, source_uri, *protocol.strings()]
    ) + find_secrets_in_value(body)
    if findings:
        raise Problem(
            "secret_detected",
            "The event contains a credential ("
            + ", ".join(sorted({f.kind for f in findings}))
            + "). Remove it and send the event again; nothing was stored.",
        )
    content = [kind, text, source_uri, *strings_in(body), *protocol.excerpts()]
    ephemeral = find_ephemeral(content)
    if ephemeral:
        raise Problem(
            "ephemeral_value",
            "The event holds a value that is only good for a moment ("
            + ", ".join(ephemeral)
            + "). memdesk never remembers one; nothing was stored.",
            kinds=list(ephemeral),
        )
    classification = classify(content, hint=sensitivity)
    with transaction.atomic():
        subject = subject_resolve(tenant=tenant, key=subject_key)
        if classification.consent_classes:
            consented = consented_classes(tenant=tenant, subject_ids=[subject.pk]).get(
                subject.pk, frozenset()
            )
            missing = [c for c in classification.consent_classes if c not in consented]
            if missing:
                # Raised inside the transaction: a subject created for it goes too.
                raise Problem(
                    "consent_required",
                    f"The event is about {', '.join(missing)}, and {subject_key} has not "
                    "consented to memdesk keeping that. Nothing was stored.",
                    consent_required=missing,
                )
        # The agent's `echo_of`, and whatever recall handed it that the text restates.
        detected = echoes_of(
            tenant=tenant, subject=subject, kind=kind, text=text, now=timezone.now()
        )
        echoed = list(dict.fromkeys([*(str(claim_id) for claim_id in echo_of or []), *detected]))
        event = Event.objects.create(
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
                    **protocol.digest_part(),
                }
            ),
            sensitivity=classification.sensitivity,
            echo_of=echoed,
            token_id=int(actor.id) if actor.kind == "agent" else None,
            stage=protocol.stage,
            input_fingerprint=protocol.input_fingerprint,
            policy_version=protocol.policy_version,
            idempotency_key=protocol.idempotency_key,
            effect=protocol.effect,
            evidence=protocol.evidence,
        )
        if event.text:
            event_embeddings_enqueue_on_commit(event_ids=[event.pk])
        return event
