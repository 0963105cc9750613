"""`AsyncDesk`: `Desk` for asyncio, the same calls and rules, awaited."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any, TypeVar, cast

import httpx

from memdesk_client import _calls
from memdesk_client._core import (
    USER_AGENT,
    Call,
    Retry,
    RetryPolicy,
    check_same_origin,
    delay_before_retry,
    error_from_response,
    parse_json,
    transport_error,
)
from memdesk_client._recovery import AsyncRecoveryMethods
from memdesk_client.errors import MemdeskError
from memdesk_client.receipts import AsyncReceiptScope
from memdesk_client.types import (
    Claim,
    ClaimDetail,
    Event,
    HotMemory,
    Page,
    RecallResult,
    Receipt,
    ReceiptDetail,
    ResolvedSkill,
    Skill,
    Verdict,
)

T = TypeVar("T")

__all__ = ["AsyncDesk"]


class AsyncDesk(AsyncRecoveryMethods):
    """memdesk's agent API for one agent token, for asyncio.

    Writes that create something carry an `Idempotency-Key` (made here unless
    the caller gives one), so a timeout or a 503 is retried safely; other writes
    are retried only when memdesk refused them with 429 and `Retry-After`.
    Errors are `memdesk_client.errors` exceptions carrying the problem's `code`.
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float = 10.0,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.retry = retry or RetryPolicy()
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            headers={"Authorization": f"Bearer {token}", "User-Agent": USER_AGENT},
            timeout=timeout,
            transport=transport,
            follow_redirects=False,
        )
        self._hot: dict[tuple[str, int, tuple[tuple[str, str], ...]], HotMemory] = {}
        self._skills: dict[tuple[str, str | None, int | None], tuple[str, ResolvedSkill]] = {}

    @classmethod
    def from_env(cls, **options: Any) -> AsyncDesk:
        """A desk for `MEMDESK_URL` with the agent token in `MEMDESK_TOKEN`."""
        return cls(os.environ["MEMDESK_URL"], os.environ["MEMDESK_TOKEN"], **options)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncDesk:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # --- sending ------------------------------------------------------------------------

    async def send(self, call: Call[T]) -> T:
        """Send one call, retrying only as its retry rule allows."""
        attempt = 0
        while True:
            try:
                response = await self._http.request(
                    call.method,
                    call.path,
                    params=call.params,
                    json=call.json,
                    files=call.files,
                    headers=call.headers,
                )
            except httpx.TransportError as exc:
                error: MemdeskError = transport_error(exc)
                cause: BaseException | None = exc
            else:
                if response.status_code < 300 or response.status_code in call.accept:
                    return call.parse(response)
                error, cause = error_from_response(response), None
            delay = delay_before_retry(call, self.retry, attempt, error)
            if delay is None:
                raise error from cause
            await asyncio.sleep(delay)
            attempt += 1

    async def _pages(self, first: Call[Page]) -> AsyncIterator[Any]:
        page = await self.send(first)
        while True:
            for item in page["results"]:
                yield item
            if not page.get("next"):
                return
            url = check_same_origin(self.base_url, page["next"] or "")
            page = await self.send(
                Call("GET", url, lambda r: cast(Page, parse_json(r)), Retry.SAFE)
            )

    # --- events -------------------------------------------------------------------------

    async def log_event(
        self,
        subject: str,
        kind: str,
        text: str | None = None,
        *,
        observed_at: str | None = None,
        idempotency_key: str | None = None,
        **fields: Any,
    ) -> Event:
        """Record what the agent observed (`run_id`, `agent`, `body`, `source_uri`, `echo_of`…)."""
        return await self.send(
            _calls.log_event(
                subject=subject,
                kind=kind,
                text=text,
                observed_at=observed_at,
                idempotency_key=idempotency_key,
                fields=fields,
            )
        )

    async def get_event(self, event_id: str) -> Event:
        return await self.send(_calls.get_event(event_id))

    # --- claims -------------------------------------------------------------------------

    async def propose(
        self,
        subject: str,
        predicate: str,
        value: Any,
        *,
        sources: Iterable[Mapping[str, Any] | str],
        kind: str = "fact",
        text: str | None = None,
        authority: str = "agent_inferred",
        basis: str = "inference",
        idempotency_key: str | None = None,
        **fields: Any,
    ) -> Verdict:
        """Propose a claim to the write gate; the verdict says what became of it."""
        body = _calls.candidate(
            subject=subject,
            kind=kind,
            predicate=predicate,
            value=value,
            text=text,
            sources=sources,
            authority=authority,
            basis=basis,
            fields=fields,
        )
        return await self.send(_calls.propose(body, idempotency_key))

    async def propose_batch(
        self, items: Iterable[Mapping[str, Any]], *, idempotency_key: str | None = None
    ) -> list[Verdict | dict[str, Any]]:
        """Up to 1,000 claim bodies; one verdict (or `{"error": problem}`) each, in order."""
        return await self.send(_calls.propose_batch(items, idempotency_key))

    async def get_claim(self, claim_id: str) -> ClaimDetail:
        return await self.send(_calls.get_claim(claim_id))

    async def list_claims(self, *, limit: int | None = None, **filters: Any) -> Page:
        """One page; filters `subject`, `status`, `predicate`, `kind`."""
        return await self.send(_calls.list_claims({"limit": limit, **filters}))

    def iter_claims(self, *, limit: int | None = None, **filters: Any) -> AsyncIterator[Claim]:
        """Every matching claim, page after page (`limit` is the page size)."""
        return self._pages(_calls.list_claims({"limit": limit, **filters}))

    async def invalidate_claim(self, claim_id: str, reason: str) -> Claim:
        return await self.send(_calls.invalidate_claim(claim_id, reason))

    async def derive_claim(
        self,
        derived_from: Iterable[str],
        subject: str,
        predicate: str,
        value: Any,
        *,
        sources: Iterable[Mapping[str, Any] | str] = (),
        kind: str = "fact",
        text: str | None = None,
        authority: str = "agent_inferred",
        basis: str = "inference",
        idempotency_key: str | None = None,
        **fields: Any,
    ) -> Verdict:
        """Record a claim derived from others (posted under the first parent)."""
        parents = list(derived_from)
        if not parents:
            raise ValueError("derive_claim needs at least one parent claim id")
        body = _calls.candidate(
            subject=subject,
            kind=kind,
            predicate=predicate,
            value=value,
            text=text,
            sources=sources,
            authority=authority,
            basis=basis,
            fields=fields,
        )
        return await self.send(_calls.derive_claim(parents[0], body, parents, idempotency_key))

    async def gate_rules(self) -> dict[str, Any]:
        return await self.send(_calls.gate_rules())

    # --- recall -------------------------------------------------------------------------

    async def recall(
        self,
        subject: str,
        query: str = "",
        *,
        scope: Mapping[str, Any] | None = None,
        kinds: Iterable[str] | None = None,
        limit: int | None = None,
        budget_chars: int | None = None,
        as_of: str | None = None,
        cutoff: str | None = None,
        include_stale: bool | None = None,
    ) -> RecallResult:
        """What the agent may use about `subject`, ranked, each item with its `why`."""
        return await self.send(
            _calls.recall(
                {
                    "subject": subject,
                    "query": query,
                    "scope": dict(scope) if scope is not None else None,
                    "kinds": list(kinds) if kinds is not None else None,
                    "limit": limit,
                    "budget_chars": budget_chars,
                    "as_of": as_of,
                    "cutoff": cutoff,
                    "include_stale": include_stale,
                }
            )
        )

    async def recall_trace(self, trace_id: str) -> dict[str, Any]:
        return await self.send(_calls.recall_trace(trace_id))

    async def recall_used(
        self, trace_id: str, items: Iterable[Mapping[str, Any]], *, run_id: str | None = None
    ) -> dict[str, Any]:
        """Record which recalled items went into the agent's context."""
        return await self.send(_calls.recall_used(trace_id, items, run_id))

    async def hot_memory(
        self,
        subject: str,
        *,
        budget_chars: int = 4000,
        scope: Mapping[str, str] | None = None,
    ) -> HotMemory:
        """The subject's hot-memory block for `scope` (global claims, and of the claims
        on one predicate the most specific that `scope` contains; without it, global
        claims only). The client keeps the last block and its ETag and asks with
        `If-None-Match`; on 304 it returns that block, `not_modified=True`."""
        scoped = tuple(sorted((scope or {}).items()))
        known = self._hot.get((subject, budget_chars, scoped))
        response = await self.send(
            _calls.hot_memory(subject, budget_chars, known.etag if known else None, scoped)
        )
        if response.status_code == 304 and known is not None:
            fresh = HotMemory(**{**known.__dict__, "not_modified": True})
        else:
            fresh = HotMemory.from_json(response.json(), etag=response.headers.get("ETag"))
        self._hot[(subject, budget_chars, scoped)] = fresh
        return fresh

    # --- receipts -----------------------------------------------------------------------

    async def plan_receipt(
        self,
        *,
        operation: str,
        target: str,
        intent: Any,
        idempotency_key: str,
        reconciler: Mapping[str, Any] | None = None,
        **fields: Any,
    ) -> tuple[Receipt, bool]:
        """Write the receipt before the call. Returns it and whether it is new: an
        existing receipt for the key comes back in whatever state it is in now."""
        response = await self.send(
            _calls.plan_receipt(
                operation=operation,
                target=target,
                intent=intent,
                idempotency_key=idempotency_key,
                reconciler=reconciler,
                fields=fields,
            )
        )
        return cast(Receipt, response.json()), response.status_code == 201

    async def transition_receipt(
        self,
        receipt_id: str,
        to: str,
        *,
        idempotency_key: str | None = None,
        external_id: str | None = None,
        error_code: str | None = None,
        evidence: Mapping[str, Any] | None = None,
        lease_seconds: int | None = None,
    ) -> Receipt:
        """Move a receipt (`submitted`, then `succeeded` | `rejected` | `outcome_unknown`)."""
        fields = {
            "external_id": external_id,
            "error_code": error_code,
            "evidence": dict(evidence) if evidence is not None else None,
            "lease_seconds": lease_seconds,
        }
        return await self.send(_calls.transition_receipt(receipt_id, to, fields, idempotency_key))

    def receipt(
        self,
        *,
        operation: str,
        target: str,
        intent: Any,
        idempotency_key: str,
        reconciler: Mapping[str, Any] | None = None,
        **fields: Any,
    ) -> AsyncReceiptScope:
        """`async with desk.receipt(...) as r:` — see `memdesk_client.receipts`."""
        return AsyncReceiptScope(
            self,
            {
                "operation": operation,
                "target": target,
                "intent": intent,
                "idempotency_key": idempotency_key,
                "reconciler": reconciler,
                **fields,
            },
        )

    async def get_receipt(self, receipt_id: str) -> ReceiptDetail:
        return await self.send(_calls.get_receipt(receipt_id))

    async def list_receipts(self, *, limit: int | None = None, **filters: Any) -> Page:
        """One page; filters `state`, `operation`."""
        return await self.send(_calls.list_receipts({"limit": limit, **filters}))

    def iter_receipts(self, *, limit: int | None = None, **filters: Any) -> AsyncIterator[Receipt]:
        return self._pages(_calls.list_receipts({"limit": limit, **filters}))

    # --- skills -------------------------------------------------------------------------

    async def list_skills(self, *, limit: int | None = None) -> Page:
        return await self.send(_calls.list_skills({"limit": limit}))

    def iter_skills(self, *, limit: int | None = None) -> AsyncIterator[Skill]:
        return self._pages(_calls.list_skills({"limit": limit}))

    async def get_skill(self, slug: str) -> Skill:
        return await self.send(_calls.get_skill(slug))

    async def create_skill(
        self, slug: str, name: str | None = None, *, idempotency_key: str | None = None
    ) -> Skill:
        return await self.send(_calls.create_skill(slug, name, idempotency_key))

    def iter_skill_versions(self, slug: str, *, limit: int | None = None) -> AsyncIterator[Any]:
        return self._pages(_calls.list_skill_versions(slug, {"limit": limit}))

    async def get_skill_version(self, slug: str, number: int) -> dict[str, Any]:
        return await self.send(_calls.get_skill_version(slug, number))

    async def upload_skill_version(
        self, slug: str, package: bytes, *, idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """Upload a zip whose root holds SKILL.md; identical bytes return the existing version."""
        return await self.send(_calls.upload_skill_version(slug, package, idempotency_key))

    async def submit_skill_version(
        self, slug: str, number: int, *, idempotency_key: str | None = None
    ) -> dict[str, Any]:
        return await self.send(_calls.submit_skill_version(slug, number, idempotency_key))

    async def record_evaluation(
        self,
        slug: str,
        number: int,
        *,
        category: str,
        passed: bool,
        content_hash: str,
        details: Mapping[str, Any] | None = None,
        environment: Mapping[str, Any] | None = None,
        cases: Sequence[Mapping[str, Any]] | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        body = {
            "category": category,
            "passed": passed,
            "content_hash": content_hash,
            "details": dict(details) if details is not None else None,
            "environment": dict(environment) if environment is not None else None,
            "cases": [dict(case) for case in cases] if cases is not None else None,
        }
        return await self.send(_calls.record_evaluation(slug, number, body, idempotency_key))

    def iter_evaluations(
        self, slug: str, number: int, *, limit: int | None = None
    ) -> AsyncIterator[Any]:
        return self._pages(_calls.list_evaluations(slug, number, {"limit": limit}))

    async def resolve_skill(
        self,
        slug: str,
        *,
        label: str | None = None,
        version: int | None = None,
        instance: str | None = None,
    ) -> ResolvedSkill:
        """The version to run (`production` unless a label or version is named). The
        client keeps the last answer and revalidates it with its ETag (content hash)."""
        key = (slug, label, version)
        known = self._skills.get(key)
        response = await self.send(
            _calls.resolve_skill(
                slug,
                label=label,
                version=version,
                instance=instance,
                etag=known[0] if known else None,
            )
        )
        if response.status_code == 304 and known is not None:
            return known[1]
        resolved = _calls.resolved_skill(response)
        self._skills[key] = (response.headers.get("ETag", ""), resolved)
        return resolved

    async def skill_file(self, slug: str, number: int, path: str) -> bytes:
        """One file of a version, as the bytes memdesk stored (data, never to be run blind)."""
        return await self.send(_calls.skill_file(slug, number, path))

    async def skill_catalog(
        self,
        q: str = "",
        *,
        tools: Sequence[str] | None = None,
        loaded: Sequence[str] = (),
        limit: int | None = None,
    ) -> dict[str, Any]:
        """Level 1: production skills matching task words, without bodies. `tools` (the
        tools you have) leaves out skills needing others; `conflicts` warns about data
        that skills loaded together would pass where it must not go."""
        return await self.send(_calls.skill_catalog(q=q, tools=tools, loaded=loaded, limit=limit))

    async def skill_body(self, slug: str, number: int) -> dict[str, Any]:
        """Level 2: the SKILL.md body and the file listing of a published version."""
        return await self.send(_calls.skill_body(slug, number))

    async def instantiate_skill(
        self,
        slug: str,
        number: int,
        *,
        bindings: Mapping[str, str] | None = None,
        tools: Sequence[str] | None = None,
        capabilities: Sequence[str] | None = None,
        inputs: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Instantiate a version for this task: bind each credential slot to the *name*
        of a secret you hold and the skill's inputs to this task's values. The answer's
        `state` is `ready` or `blocked` with every reason; while your latest `instance`
        of the version is ready, resolve and body serve it to you. `tools` and
        `capabilities` say what is at hand in this run; left out, your token's grants
        alone decide."""
        body: dict[str, Any] = {"bindings": dict(bindings or {}), "inputs": dict(inputs or {})}
        if tools is not None:
            body["tools"] = list(tools)
        if capabilities is not None:
            body["capabilities"] = list(capabilities)
        return await self.send(_calls.instantiate_skill(slug, number, body))

    async def skill_diff(self, slug: str, a: int, b: int) -> dict[str, Any]:
        return await self.send(_calls.skill_diff(slug, a, b))

    def iter_label_history(
        self, slug: str, label: str = "production", *, limit: int | None = None
    ) -> AsyncIterator[Any]:
        return self._pages(_calls.label_history(slug, label, {"limit": limit}))

    # --- deletions ----------------------------------------------------------------------

    async def request_deletion(
        self, *, claim_id: str | None = None, subject: str | None = None
    ) -> dict[str, Any]:
        """Ask memdesk to forget one memory (or all of a subject's). Only the person who
        owns the subject may: an agent token gets `PersonRequired`."""
        if (claim_id is None) == (subject is None):
            raise ValueError("name exactly one of claim_id or subject")
        return await self.send(_calls.request_deletion(claim_id, subject))

    async def get_deletion(self, deletion_id: str) -> dict[str, Any]:
        return await self.send(_calls.get_deletion(deletion_id))
