"""memdesk as MCP tools: `memdesk-mcp` (stdio by default, or streamable HTTP).

The server talks to memdesk through `AsyncDesk` with one agent token, read
from the environment (`MEMDESK_URL`, `MEMDESK_TOKEN`; never a command-line
argument, which other users of the machine can read). Every memdesk rule
still holds: the write gate judges what `remember` proposes, a receipt is
written before a side effect, recovery only reads, and only the person who
owns a subject may make memdesk forget it.

A memdesk problem reaches the model as a tool error that starts with its
code: `source_required (400): …`.
"""

# No `from __future__ import annotations` here: the MCP SDK reads each tool's
# parameter types from its signature at registration.

import argparse
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from memdesk_client._paths import skill_file_segments
from memdesk_client.async_desk import AsyncDesk
from memdesk_client.errors import (
    MemdeskError,
    PersonRequired,
    ProblemError,
    TransportError,
    UnsafePathSegment,
)
from memdesk_client.types import ResolvedSkill

__all__ = ["build_server", "main"]

INSTRUCTIONS = """\
memdesk is this agent's reviewed long-term memory and its record of side effects.
- Before answering about a person or project, `recall` what may be used about them
  (or read `hot_memory` once per conversation). Use only what comes back.
- Log what you observe with `log_event`; propose durable facts and preferences with
  `remember`, citing those events. memdesk may accept, hold for a person's review,
  or reject what you propose; trust only accepted claims.
- Before any call that changes another system (publishing, sending, paying,
  creating), `receipt_plan` it, `receipt_update` it to submitted just before the
  call, and to succeeded, rejected or outcome_unknown after it. After a timeout or
  a lost connection report outcome_unknown and do NOT make the call again.
- Save progress with `checkpoint_save`; after a restart ask `recover` first.
- Skills: `skill_search`, then `skill_load` metadata, then its body, then files.
"""

_READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
_ADDITIVE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)

_OUTCOMES = {
    "accepted": "accepted",
    "merged": "accepted",
    "superseded_previous": "accepted",
    "needs_review": "waiting_for_review",
    "conflict": "waiting_for_review",
    "quarantined": "rejected",
    "rejected": "rejected",
}
_EXPLANATIONS = {
    "accepted": "memdesk accepted it: it is active and recall may return it.",
    "waiting_for_review": "memdesk holds it for a person's review; do not rely on it yet.",
    "rejected": "memdesk refused it; it will not be recalled. The reasons say why.",
}
_RECOVERY_ADVICE = {
    "fresh": "Start the task from the beginning.",
    "resume": "Continue from the checkpoint's stage.",
    "verify_only": "A side effect's outcome is not known yet: do not repeat it; check "
    "its receipt again later.",
    "no_op": "Everything is done and verified: do nothing.",
    "escalate": "Stop and hand the task to a person.",
}


async def _resolve_instantiated(desk: AsyncDesk, slug: str, version: int | None) -> ResolvedSkill:
    """Resolve a skill, instantiating it first when memdesk asks for a ready instance
    (this agent's grants decide; a skill needing bindings or inputs stays refused)."""
    try:
        return await desk.resolve_skill(slug, version=version)
    except ProblemError as error:
        if error.code != "not_instantiable" or "number" not in error.problem:
            raise
        number = int(error.problem["number"])
    answer = await desk.instantiate_skill(slug, number)
    if answer["state"] != "ready":
        reasons = "; ".join(reason["detail"] for reason in answer["reasons"])
        raise ToolError(f"not_instantiable (409): {reasons}")
    return await desk.resolve_skill(slug, version=version)


def _tool_error(error: MemdeskError) -> ToolError:
    if isinstance(error, ProblemError):
        text = f"{error.code} ({error.status}): {error.detail}"
        if error.errors:
            fields = "; ".join(f"{k}: {' '.join(v)}" for k, v in error.errors.items())
            text += f" [{fields}]"
        if "allowed" in error.problem:
            text += f" allowed: {error.problem['allowed']}"
        return ToolError(text)
    if isinstance(error, UnsafePathSegment):
        return ToolError(f"{error.code}: {error} Nothing was sent to memdesk.")
    if isinstance(error, TransportError):
        return ToolError(f"memdesk_unreachable: {error}")
    return ToolError(f"memdesk_error: {error}")


def build_server(desk: AsyncDesk) -> MCPServer:
    """The MCP server whose tools call memdesk through `desk`."""

    @asynccontextmanager
    async def lifespan(_server: MCPServer) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await desk.aclose()

    server: MCPServer = MCPServer(
        name="memdesk",
        instructions=INSTRUCTIONS,
        version="0.1.0",
        lifespan=lifespan,
        # stderr is the desktop agent's log; tool failures already reach the model.
        log_level="WARNING",
    )

    @server.tool(annotations=_READ_ONLY)
    async def recall(
        subject: Annotated[
            str, Field(description="Whom it is about, as kind:ref, e.g. user:alice")
        ],
        query: Annotated[str, Field(description="What you want to know, in words")] = "",
        scope: Annotated[
            dict[str, Any] | None, Field(description='Narrow to a scope, e.g. {"project": "crm"}')
        ] = None,
        kinds: Annotated[
            list[str] | None, Field(description="fact, preference, experience, summary")
        ] = None,
        limit: Annotated[int, Field(ge=1, le=100)] = 10,
    ) -> dict[str, Any]:
        """Recall what memdesk lets you use about one subject, best first.

        Only active, currently valid claims come back; each item has `why` (its rank
        and the signals behind it). Use these and nothing you merely remember from
        earlier turns. An empty list means memdesk knows nothing usable.
        """
        try:
            result = await desk.recall(subject, query, scope=scope, kinds=kinds, limit=limit)
        except MemdeskError as error:
            raise _tool_error(error) from error
        return {
            "items": [
                {
                    "id": item.id,
                    "kind": item.kind,
                    "predicate": item.predicate,
                    "value": item.value,
                    "text": item.text,
                    "authority": item.authority,
                    "scope": item.scope,
                    "stale": item.stale,
                    "why": {
                        "rank": item.why.rank,
                        "matched": item.why.matched,
                        "scope_match": item.why.scope_match,
                    },
                    **({"conflict": item.conflict} if item.conflict else {}),
                }
                for item in result.items
            ],
            "excluded": result.excluded,
            "trace_id": result.trace_id,
        }

    @server.tool(annotations=_ADDITIVE)
    async def remember(
        subject: Annotated[str, Field(description="Whom it is about, e.g. user:alice")],
        predicate: Annotated[str, Field(description="What it is about, e.g. home_city")],
        value: Annotated[Any, Field(description="The value, e.g. Shanghai")],
        text: Annotated[str, Field(description="One sentence stating it")],
        sources: Annotated[
            list[str] | None,
            Field(description="Event ids from log_event (or URIs) that support it"),
        ] = None,
        evidence: Annotated[
            str | None,
            Field(description="What you observed that supports it, if you logged no event"),
        ] = None,
        kind: Literal["fact", "preference", "experience"] = "fact",
        authority: Literal["agent_inferred", "tool_verified", "user_explicit"] = "agent_inferred",
        basis: Literal["inference", "reported", "verified"] = "inference",
        scope: dict[str, Any] | None = None,
        supersedes: Annotated[
            str | None, Field(description="Id of the claim this corrects, if any")
        ] = None,
    ) -> dict[str, Any]:
        """Propose a memory. memdesk's write gate decides what becomes of it.

        The answer's `outcome` is `accepted` (active now), `waiting_for_review` (a
        person decides; do not rely on it yet) or `rejected` (never stored as fact),
        with memdesk's `reasons`. Cite the events it rests on in `sources`, or give
        `evidence` and it is logged as an event and cited. Never put secrets or
        instructions to yourself in a memory: memdesk rejects or quarantines them.
        """
        # A URI source needs the time it was seen; the agent cites it now.
        now = datetime.now(UTC).isoformat()
        cited: list[str | dict[str, Any]] = [
            {"uri": source, "observed_at": now} if "://" in source else source
            for source in sources or []
        ]
        try:
            if evidence:
                event = await desk.log_event(subject, "agent_observation", evidence)
                cited.append(event["id"])
            fields: dict[str, Any] = {}
            if scope is not None:
                fields["scope"] = scope
            if supersedes is not None:
                fields["supersedes"] = supersedes
            verdict = await desk.propose(
                subject,
                predicate,
                value,
                sources=cited,
                kind=kind,
                text=text,
                authority=authority,
                basis=basis,
                **fields,
            )
        except MemdeskError as error:
            raise _tool_error(error) from error
        outcome = _OUTCOMES.get(verdict["decision"], "waiting_for_review")
        return {
            "outcome": outcome,
            "explanation": _EXPLANATIONS[outcome],
            "decision": verdict["decision"],
            "reasons": verdict["reasons"],
            "claim_id": verdict["id"],
            "status": verdict["status"],
            "merged_into": verdict["merged_into"],
            "conflict_with": verdict["conflict_with"],
            "review_item": verdict["review_item"],
        }

    @server.tool(annotations=_ADDITIVE)
    async def log_event(
        subject: Annotated[str, Field(description="Whom it is about, e.g. user:alice")],
        kind: Annotated[
            str,
            Field(description="user_message, user_statement, tool_result, agent_observation…"),
        ],
        text: Annotated[str, Field(description="What was said or observed, verbatim")],
        body: dict[str, Any] | None = None,
        source_uri: Annotated[
            str | None, Field(description="Where it came from, e.g. chat://s1/m7")
        ] = None,
        run_id: str | None = None,
        echo_of: Annotated[
            list[str] | None,
            Field(description="Event ids this merely repeats (memdesk's own recall, say)"),
        ] = None,
    ) -> dict[str, Any]:
        """Record what you observed in memdesk's append-only ledger; returns its id.

        Events are evidence: cite their ids when you `remember` something. They are
        never changed afterwards.
        """
        fields: dict[str, Any] = {
            key: value
            for key, value in {
                "body": body,
                "source_uri": source_uri,
                "run_id": run_id,
                "echo_of": echo_of,
            }.items()
            if value is not None
        }
        try:
            event = await desk.log_event(subject, kind, text, **fields)
        except MemdeskError as error:
            raise _tool_error(error) from error
        return {
            "id": event["id"],
            "digest": event["digest"],
            "recorded_at": event["recorded_at"],
        }

    @server.tool(annotations=_ADDITIVE)
    async def receipt_plan(
        operation: Annotated[str, Field(description="What the call does, e.g. articles.create")],
        target: Annotated[str, Field(description="Where it goes, e.g. the API URL")],
        intent: Annotated[dict[str, Any], Field(description="What you mean to send (no secrets)")],
        idempotency_key: Annotated[
            str, Field(description="A key unique to this one call; the same key finds it again")
        ],
        reconciler: Annotated[
            dict[str, Any] | None,
            Field(description='How memdesk checks an unknown outcome, e.g. {"adapter": "manual"}'),
        ] = None,
    ) -> dict[str, Any]:
        """Write a receipt BEFORE making a call that changes another system.

        If memdesk already has a receipt for this idempotency key, you get it back
        with `already_planned: true` and its current state: when that state is not
        `planned`, the call may already have happened — do not make it again.
        """
        try:
            receipt, created = await desk.plan_receipt(
                operation=operation,
                target=target,
                intent=intent,
                idempotency_key=idempotency_key,
                reconciler=reconciler,
            )
        except MemdeskError as error:
            raise _tool_error(error) from error
        safe = receipt["state"] == "planned"
        return {
            "receipt_id": receipt["id"],
            "state": receipt["state"],
            "intent_fingerprint": receipt["intent_fingerprint"],
            "already_planned": not created,
            "may_call": safe,
            "advice": (
                "Update it to submitted just before the call."
                if safe
                else f"This call is already {receipt['state']}: do not make it again."
            ),
        }

    @server.tool(annotations=_ADDITIVE)
    async def receipt_update(
        receipt_id: str,
        state: Annotated[
            Literal["submitted", "succeeded", "rejected", "outcome_unknown"],
            Field(
                description="submitted just before the call; then succeeded, rejected (the "
                "platform refused) or outcome_unknown (timeout, lost connection, no answer)"
            ),
        ],
        external_id: Annotated[
            str | None, Field(description="The id the platform gave, on succeeded")
        ] = None,
        error_code: str | None = None,
        evidence: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Report what happened to a planned call.

        After a timeout or a lost connection report `outcome_unknown` and never retry
        the call yourself: memdesk finds out with a read whether it happened.
        """
        try:
            receipt = await desk.transition_receipt(
                receipt_id,
                state,
                external_id=external_id,
                error_code=error_code,
                evidence=evidence,
            )
        except MemdeskError as error:
            raise _tool_error(error) from error
        return {
            "receipt_id": receipt["id"],
            "state": receipt["state"],
            "external_id": receipt.get("external_id") or None,
        }

    @server.tool(annotations=ToolAnnotations(idempotent_hint=True, destructive_hint=False))
    async def checkpoint_save(
        task_key: Annotated[str, Field(description="Names the task across restarts")],
        input_fingerprint: Annotated[
            str, Field(description="A digest of the task's input; a new input starts over")
        ],
        stage: Annotated[str, Field(description="Where the task stands")],
        stage_complete: bool = False,
        effects: Annotated[
            list[str] | None, Field(description="Receipt ids of the side effects so far")
        ] = None,
        retry_count: int | None = None,
        max_retries: int | None = None,
        allowed_next_stages: list[str] | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any]:
        """Save where a task stands (replaces the task's previous checkpoint)."""
        try:
            checkpoint = await desk.checkpoint(
                task_key,
                input_fingerprint=input_fingerprint,
                stage=stage,
                stage_complete=stage_complete,
                effects=effects,
                retry_count=retry_count,
                max_retries=max_retries,
                allowed_next_stages=allowed_next_stages,
                run_id=run_id,
            )
        except MemdeskError as error:
            raise _tool_error(error) from error
        return dict(checkpoint)

    @server.tool(annotations=_READ_ONLY)
    async def recover(task_key: str, input_fingerprint: str) -> dict[str, Any]:
        """Ask what to do with a task after a crash, a timeout or a second trigger.

        `decision` is fresh, resume, verify_only, no_op or escalate, with the reason
        and `advice`. Asking changes nothing, however often.
        """
        try:
            answer = await desk.recover(task_key, input_fingerprint)
        except MemdeskError as error:
            raise _tool_error(error) from error
        return {
            "decision": answer["decision"],
            "reason": answer["reason"],
            "advice": _RECOVERY_ADVICE.get(answer["decision"], ""),
            "checkpoint": answer["checkpoint"],
            "effects": [
                {"receipt_id": e["id"], "operation": e["operation"], "state": e["state"]}
                for e in answer["effects"]
            ],
        }

    @server.tool(annotations=_READ_ONLY)
    async def hot_memory(
        subject: Annotated[str, Field(description="e.g. user:alice")],
        budget_chars: Annotated[int, Field(ge=1, le=100_000)] = 4000,
    ) -> dict[str, Any]:
        """A short block of the subject's most important memories, to read once at the
        start of a conversation. `unchanged: true` means it is what you got last time."""
        try:
            block = await desk.hot_memory(subject, budget_chars=budget_chars)
        except MemdeskError as error:
            raise _tool_error(error) from error
        return {
            "subject": block.subject,
            "text": block.text,
            "claims": block.claims,
            "unchanged": block.not_modified,
        }

    @server.tool(annotations=_READ_ONLY)
    async def skill_search(
        query: Annotated[str, Field(description="Words from the skill's name or slug")] = "",
        limit: Annotated[int, Field(ge=1, le=100)] = 20,
    ) -> dict[str, Any]:
        """Find skills by name. Then `skill_load` one: metadata first, body when you use it."""
        words = [word for word in query.lower().split() if word]
        found: list[dict[str, Any]] = []
        try:
            async for skill in desk.iter_skills(limit=100):
                haystack = f"{skill['slug']} {skill.get('name') or ''}".lower()
                if all(word in haystack for word in words):
                    production = skill.get("production") or {}
                    found.append(
                        {
                            "slug": skill["slug"],
                            "name": skill.get("name") or skill["slug"],
                            "production_version": production.get("number"),
                        }
                    )
                if len(found) >= limit:
                    break
        except MemdeskError as error:
            raise _tool_error(error) from error
        return {"skills": found}

    @server.tool(annotations=_READ_ONLY)
    async def skill_load(
        slug: str,
        part: Annotated[
            Literal["metadata", "body", "file"],
            Field(
                description="metadata (manifest and file list) first; body (SKILL.md "
                "instructions) when you run it; file for one file the body names"
            ),
        ] = "metadata",
        path: Annotated[str | None, Field(description="The file's path, for part=file")] = None,
        version: Annotated[
            int | None, Field(description="An exact version; default the production one")
        ] = None,
    ) -> dict[str, Any]:
        """Load a published skill step by step, so only what you need enters context."""
        try:
            if part == "file":
                if not path:
                    raise ToolError("path_required: name the file to load with `path`.")
                # Checked before anything is sent: a bad path costs no request at all.
                skill_file_segments(path)
            resolved = await _resolve_instantiated(desk, slug, version)
            head = {
                "skill": resolved["skill"],
                "version": resolved["number"],
                "content_hash": resolved["content_hash"],
                "status": resolved["status"],
            }
            if resolved.get("deprecation"):
                head["deprecation"] = resolved["deprecation"]
            if part == "metadata":
                return {
                    **head,
                    "manifest": resolved["manifest"],
                    "files": [{"path": f["path"], "size": f["size"]} for f in resolved["files"]],
                }
            if part == "body":
                return {**head, "body": resolved["body"]}
            content = await desk.skill_file(slug, resolved["number"], path or "")
        except MemdeskError as error:
            raise _tool_error(error) from error
        try:
            return {**head, "path": path, "text": content.decode("utf-8")}
        except UnicodeDecodeError:
            return {**head, "path": path, "binary": True, "size": len(content)}

    @server.tool(annotations=ToolAnnotations(destructive_hint=True, open_world_hint=False))
    async def forget(
        claim_id: Annotated[str | None, Field(description="The memory to delete")] = None,
        subject: Annotated[
            str | None, Field(description="Delete everything about this subject instead")
        ] = None,
    ) -> dict[str, Any]:
        """Ask memdesk to delete a memory (or all of a subject's) everywhere it spread.

        Only the person the memory is about may do this. When this agent's token may
        not, the tool fails with `person_required`: tell the user to delete it on
        memdesk's "My memories" page.
        """
        if (claim_id is None) == (subject is None):
            raise ToolError("validation_error: name exactly one of claim_id or subject.")
        try:
            accepted = await desk.request_deletion(claim_id=claim_id, subject=subject)
        except PersonRequired as error:
            raise ToolError(
                f"person_required ({error.status}): {error.detail} Only the user may delete "
                "their memories: ask them to use memdesk's My memories page."
            ) from error
        except MemdeskError as error:
            raise _tool_error(error) from error
        return {"deletion": accepted["deletion"], "status": "requested"}

    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="memdesk-mcp",
        description="memdesk's tools over MCP. The agent token is read from MEMDESK_TOKEN.",
    )
    parser.add_argument(
        "--url",
        default=os.environ.get("MEMDESK_URL", ""),
        help="memdesk's address (default: MEMDESK_URL)",
    )
    parser.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="streamable HTTP: address to bind")
    parser.add_argument("--port", type=int, default=8765, help="streamable HTTP: port")
    parser.add_argument(
        "--timeout",
        type=float,
        default=float(os.environ.get("MEMDESK_TIMEOUT", "10")),
        help="seconds to wait for memdesk (default: MEMDESK_TIMEOUT or 10)",
    )
    args = parser.parse_args(argv)
    token = os.environ.get("MEMDESK_TOKEN", "")
    if not args.url or not token:
        parser.error("set MEMDESK_URL (or --url) and MEMDESK_TOKEN")
    server = build_server(AsyncDesk(args.url, token, timeout=args.timeout))
    if args.transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=args.host, port=args.port)


if __name__ == "__main__":
    main()
