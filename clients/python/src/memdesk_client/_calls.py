"""Every endpoint of the agent API, once: path, body, retry rule and how to read the answer.

`Desk` and `AsyncDesk` build these and send them; neither knows a path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, cast

import httpx

from memdesk_client._core import (
    Call,
    Retry,
    compact,
    idempotency_headers,
    parse_bytes,
    parse_json,
)
from memdesk_client._paths import (
    api_path,
    label_segment,
    resource_id,
    skill_file_segments,
    skill_slug,
    version_number,
)
from memdesk_client.types import (
    Checkpoint,
    Claim,
    ClaimDetail,
    Event,
    Page,
    RecallResult,
    Receipt,
    ReceiptDetail,
    Recovery,
    ResolvedSkill,
    Skill,
    Verdict,
)


def _json(response: httpx.Response) -> Any:
    return parse_json(response)


def _page(response: httpx.Response) -> Page:
    return cast(Page, parse_json(response))


# --- events ---------------------------------------------------------------------------------


def log_event(
    *,
    subject: str,
    kind: str,
    text: str | None,
    observed_at: str | None,
    idempotency_key: str | None,
    fields: Mapping[str, Any],
) -> Call[Event]:
    from datetime import UTC, datetime

    body = compact(
        {
            "subject": subject,
            "kind": kind,
            "text": text,
            # The contract needs it; an agent logging what it sees now means now.
            "observed_at": observed_at or datetime.now(UTC).isoformat(),
            **fields,
        }
    )
    return Call(
        "POST",
        api_path("events"),
        _json,
        Retry.SAFE,
        json=body,
        headers=idempotency_headers(idempotency_key),
    )


def get_event(event_id: str) -> Call[Event]:
    return Call("GET", api_path("events", resource_id(event_id, "event id")), _json, Retry.SAFE)


# --- claims ---------------------------------------------------------------------------------


def candidate(
    *,
    subject: str,
    kind: str,
    predicate: str,
    value: Any,
    text: str | None,
    sources: Iterable[Mapping[str, Any] | str],
    authority: str,
    basis: str,
    fields: Mapping[str, Any],
) -> dict[str, Any]:
    """A claim body; a bare string among `sources` is an event id."""
    return compact(
        {
            "subject": subject,
            "kind": kind,
            "predicate": predicate,
            "value": value,
            "text": text,
            "authority": authority,
            "basis": basis,
            "sources": [
                {"event": source} if isinstance(source, str) else dict(source) for source in sources
            ],
            **fields,
        }
    )


def propose(body: dict[str, Any], idempotency_key: str | None) -> Call[Verdict]:
    return Call(
        "POST",
        api_path("claims"),
        _json,
        Retry.SAFE,
        json=body,
        headers=idempotency_headers(idempotency_key),
    )


def propose_batch(
    items: Iterable[Mapping[str, Any]], idempotency_key: str | None
) -> Call[list[Verdict | dict[str, Any]]]:
    return Call(
        "POST",
        api_path("claims:batch"),
        lambda response: parse_json(response)["results"],
        Retry.SAFE,
        json={"items": [dict(item) for item in items]},
        headers=idempotency_headers(idempotency_key),
    )


def get_claim(claim_id: str) -> Call[ClaimDetail]:
    return Call("GET", api_path("claims", resource_id(claim_id, "claim id")), _json, Retry.SAFE)


def list_claims(filters: Mapping[str, Any]) -> Call[Page]:
    return Call("GET", api_path("claims"), _page, Retry.SAFE, params=compact(filters))


def invalidate_claim(claim_id: str, reason: str) -> Call[Claim]:
    # Not idempotent on memdesk's side: a second invalidation is an illegal move,
    # so it is sent again only when memdesk refused it (429).
    return Call(
        "POST",
        api_path("claims", resource_id(claim_id, "claim id"), "invalidate"),
        _json,
        Retry.REFUSED_ONLY,
        json={"reason": reason},
    )


def derive_claim(
    parent_id: str, body: dict[str, Any], derived_from: Iterable[str], key: str | None
) -> Call[Verdict]:
    return Call(
        "POST",
        api_path("claims", resource_id(parent_id, "claim id"), "derive"),
        _json,
        Retry.SAFE,
        json={**body, "derived_from": list(derived_from)},
        headers=idempotency_headers(key),
    )


def gate_rules() -> Call[dict[str, Any]]:
    return Call("GET", api_path("gate", "rules"), _json, Retry.SAFE)


# --- recall ---------------------------------------------------------------------------------


def recall(body: dict[str, Any]) -> Call[RecallResult]:
    # Recall writes a trace, so a lost answer is not sent again blind.
    return Call(
        "POST",
        api_path("recall"),
        lambda response: RecallResult.from_json(parse_json(response)),
        Retry.REFUSED_ONLY,
        json=compact(body),
    )


def recall_trace(trace_id: str) -> Call[dict[str, Any]]:
    return Call(
        "GET", api_path("recall", "traces", resource_id(trace_id, "trace id")), _json, Retry.SAFE
    )


def recall_used(
    trace_id: str, items: Iterable[Mapping[str, Any]], run_id: str | None
) -> Call[dict[str, Any]]:
    return Call(
        "POST",
        api_path("recall", "traces", resource_id(trace_id, "trace id"), "used"),
        _json,
        Retry.SAFE,
        json=compact({"items": [dict(item) for item in items], "run_id": run_id}),
        headers=idempotency_headers(None),
    )


def hot_memory(
    subject: str, budget_chars: int, etag: str | None, scope: tuple[tuple[str, str], ...] = ()
) -> Call[httpx.Response]:
    headers = {"If-None-Match": etag} if etag else {}
    params: dict[str, Any] = {"budget_chars": budget_chars}
    if scope:
        params["scope"] = [f"{key}={value}" for key, value in scope]
    return Call(
        "GET",
        api_path("subjects", subject, "hot-memory"),
        lambda response: response,
        Retry.SAFE,
        params=params,
        headers=headers,
        accept=frozenset({304}),
    )


# --- receipts -------------------------------------------------------------------------------


def plan_receipt(
    *,
    operation: str,
    target: str,
    intent: Any,
    idempotency_key: str,
    reconciler: Mapping[str, Any] | None,
    fields: Mapping[str, Any],
) -> Call[httpx.Response]:
    body = compact(
        {
            "operation": operation,
            "target": target,
            "intent": intent,
            "idempotency_key": idempotency_key,
            "reconciler": dict(reconciler) if reconciler is not None else None,
            **fields,
        }
    )
    # The body's key makes planning the same receipt twice answer the first one;
    # the header key makes a lost answer safe to ask for again.
    return Call(
        "POST",
        api_path("receipts"),
        lambda response: response,
        Retry.SAFE,
        json=body,
        headers=idempotency_headers(None),
    )


def transition_receipt(
    receipt_id: str, to: str, fields: Mapping[str, Any], idempotency_key: str | None
) -> Call[Receipt]:
    return Call(
        "POST",
        api_path("receipts", resource_id(receipt_id, "receipt id"), "transitions"),
        _json,
        Retry.SAFE,
        json=compact({"to": to, **fields}),
        headers=idempotency_headers(idempotency_key),
    )


def get_receipt(receipt_id: str) -> Call[ReceiptDetail]:
    return Call(
        "GET", api_path("receipts", resource_id(receipt_id, "receipt id")), _json, Retry.SAFE
    )


def list_receipts(filters: Mapping[str, Any]) -> Call[Page]:
    return Call("GET", api_path("receipts"), _page, Retry.SAFE, params=compact(filters))


# --- checkpoints and recovery ---------------------------------------------------------------


def save_checkpoint(task_key: str, body: Mapping[str, Any]) -> Call[Checkpoint]:
    # PUT replaces the checkpoint with the same body: sending it twice is the same as once.
    return Call("PUT", api_path("checkpoints", task_key), _json, Retry.SAFE, json=compact(body))


def get_checkpoint(task_key: str) -> Call[Checkpoint]:
    return Call("GET", api_path("checkpoints", task_key), _json, Retry.SAFE)


def recover(
    task_key: str, input_fingerprint: str, triggered_at: datetime | None = None, run_id: str = ""
) -> Call[Recovery]:
    # Safe to send again: without a run it only reads; with one, the run's second
    # question is folded into its first answer.
    body: dict[str, Any] = {"task_key": task_key, "input_fingerprint": input_fingerprint}
    if run_id:
        body["run_id"] = run_id
    if triggered_at is not None:
        # memdesk counts the recovery decision's latency from when the run was triggered.
        body["triggered_at"] = triggered_at.isoformat()
    return Call("POST", api_path("recovery"), _json, Retry.SAFE, json=body)


def release_recovery(task_key: str, run_id: str) -> Call[dict[str, Any]]:
    # Releasing twice answers 404 the second time: sent again only if it never arrived.
    body = {"task_key": task_key, "run_id": run_id}
    return Call("POST", api_path("recovery", "release"), _json, Retry.REFUSED_ONLY, json=body)


def judge_recovery(answer_id: int, expected: str, note: str) -> Call[dict[str, Any]]:
    # A verdict appends a row; sending it again appends the same verdict again, and only
    # the latest verdict on an answer counts, so a retry changes no figure.
    body = {"expected": expected, "note": note}
    return Call(
        "POST",
        api_path("recovery", "answers", str(int(answer_id)), "verdict"),
        _json,
        Retry.SAFE,
        json=body,
    )


# --- skills ---------------------------------------------------------------------------------


def list_skills(filters: Mapping[str, Any]) -> Call[Page]:
    return Call("GET", api_path("skills"), _page, Retry.SAFE, params=compact(filters))


def get_skill(slug: str) -> Call[Skill]:
    return Call("GET", api_path("skills", skill_slug(slug)), _json, Retry.SAFE)


def create_skill(slug: str, name: str | None, key: str | None) -> Call[Skill]:
    return Call(
        "POST",
        api_path("skills"),
        _json,
        Retry.SAFE,
        json=compact({"slug": slug, "name": name}),
        headers=idempotency_headers(key),
    )


def list_skill_versions(slug: str, filters: Mapping[str, Any]) -> Call[Page]:
    return Call(
        "GET",
        api_path("skills", skill_slug(slug), "versions"),
        _page,
        Retry.SAFE,
        params=compact(filters),
    )


def get_skill_version(slug: str, number: int) -> Call[dict[str, Any]]:
    return Call(
        "GET",
        api_path("skills", skill_slug(slug), "versions", version_number(number)),
        _json,
        Retry.SAFE,
    )


def upload_skill_version(slug: str, package: bytes, key: str | None) -> Call[dict[str, Any]]:
    return Call(
        "POST",
        api_path("skills", skill_slug(slug), "versions"),
        _json,
        Retry.SAFE,
        files={"package": ("package.zip", package, "application/zip")},
        headers=idempotency_headers(key),
    )


def submit_skill_version(slug: str, number: int, key: str | None) -> Call[dict[str, Any]]:
    return Call(
        "POST",
        api_path("skills", skill_slug(slug), "versions", version_number(number), "submit"),
        _json,
        Retry.SAFE,
        headers=idempotency_headers(key),
    )


def record_evaluation(
    slug: str, number: int, body: Mapping[str, Any], key: str | None
) -> Call[dict[str, Any]]:
    return Call(
        "POST",
        api_path("skills", skill_slug(slug), "versions", version_number(number), "evaluations"),
        _json,
        Retry.SAFE,
        json=compact(body),
        headers=idempotency_headers(key),
    )


def list_evaluations(slug: str, number: int, filters: Mapping[str, Any]) -> Call[Page]:
    return Call(
        "GET",
        api_path("skills", skill_slug(slug), "versions", version_number(number), "evaluations"),
        _page,
        Retry.SAFE,
        params=compact(filters),
    )


def resolve_skill(
    slug: str,
    *,
    label: str | None,
    version: int | None,
    instance: str | None,
    etag: str | None,
) -> Call[httpx.Response]:
    headers: dict[str, str] = {}
    if instance:
        headers["X-Skill-Instance"] = instance
    if etag:
        headers["If-None-Match"] = etag
    return Call(
        "GET",
        api_path("skills", skill_slug(slug), "resolve"),
        lambda response: response,
        Retry.SAFE,
        params=compact({"label": label, "version": version}),
        headers=headers,
        accept=frozenset({304}),
    )


def skill_file(slug: str, number: int, path: str) -> Call[bytes]:
    return Call(
        "GET",
        api_path(
            "skills",
            skill_slug(slug),
            "versions",
            version_number(number),
            "files",
            *skill_file_segments(path),
        ),
        parse_bytes,
        Retry.SAFE,
    )


def skill_catalog(
    *, q: str, tools: Sequence[str] | None, loaded: Sequence[str], limit: int | None
) -> Call[dict[str, Any]]:
    params = {
        "q": q or None,
        # An empty list is an answer ("no tools"); None leaves the filter off.
        "tools": ",".join(tools) if tools is not None else None,
        "loaded": ",".join(loaded) or None,
        "limit": limit,
    }
    return Call("GET", api_path("skills", "catalog"), _json, Retry.SAFE, params=compact(params))


def skill_body(slug: str, number: int) -> Call[dict[str, Any]]:
    return Call(
        "GET",
        api_path("skills", skill_slug(slug), "versions", version_number(number), "body"),
        _json,
        Retry.SAFE,
    )


def instantiate_skill(slug: str, number: int, body: Mapping[str, Any]) -> Call[dict[str, Any]]:
    # A check that changes nothing but its audit row: safe to send again.
    return Call(
        "POST",
        api_path("skills", skill_slug(slug), "versions", version_number(number), "instantiate"),
        _json,
        Retry.SAFE,
        json=dict(body),
    )


def skill_diff(slug: str, a: int, b: int) -> Call[dict[str, Any]]:
    return Call(
        "GET",
        api_path(
            "skills", skill_slug(slug), "versions", version_number(a), "diff", version_number(b)
        ),
        _json,
        Retry.SAFE,
    )


def label_history(slug: str, label: str, filters: Mapping[str, Any]) -> Call[Page]:
    return Call(
        "GET",
        api_path("skills", skill_slug(slug), "labels", label_segment(label), "history"),
        _page,
        Retry.SAFE,
        params=compact(filters),
    )


# --- end users' memories and deletions ------------------------------------------------------


def request_deletion(claim_id: str | None, subject: str | None) -> Call[dict[str, Any]]:
    # memdesk lets only the signed-in person who owns the subject delete; an agent
    # token gets `403 person_required`. Deleting twice is not the same as once.
    if claim_id is not None:
        return Call(
            "DELETE",
            api_path("me", "memories", resource_id(claim_id, "claim id")),
            _json,
            Retry.REFUSED_ONLY,
        )
    return Call(
        "DELETE",
        api_path("me", "memories"),
        _json,
        Retry.REFUSED_ONLY,
        params=compact({"subject": subject}),
    )


def get_deletion(deletion_id: str) -> Call[dict[str, Any]]:
    return Call(
        "GET", api_path("deletions", resource_id(deletion_id, "deletion id")), _json, Retry.SAFE
    )


def resolved_skill(response: httpx.Response) -> ResolvedSkill:
    return cast(ResolvedSkill, response.json())
