"""Checkpoints and recovery, as methods of `Desk` and `AsyncDesk` (one definition each)."""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from datetime import datetime
from typing import Any, Protocol, TypeVar

from memdesk_client import _calls
from memdesk_client._core import Call
from memdesk_client.types import Checkpoint, Recovery

T = TypeVar("T")


class _Sends(Protocol):
    def send(self, call: Call[T]) -> T: ...


class _SendsAsync(Protocol):
    def send(self, call: Call[T]) -> Awaitable[T]: ...


class RecoveryMethods:
    """Where a task stands, and what to do after a crash."""

    def checkpoint(
        self: _Sends,
        task_key: str,
        *,
        input_fingerprint: str,
        stage: str,
        stage_complete: bool | None = None,
        effects: Iterable[str] | None = None,
        retry_count: int | None = None,
        max_retries: int | None = None,
        allowed_next_stages: Iterable[str] | None = None,
        run_id: str | None = None,
        expires_at: str | None = None,
    ) -> Checkpoint:
        """Save where a task stands (create or replace). `effects` are receipt ids."""
        return self.send(
            _calls.save_checkpoint(
                task_key,
                {
                    "input_fingerprint": input_fingerprint,
                    "stage": stage,
                    "stage_complete": stage_complete,
                    "effects": list(effects) if effects is not None else None,
                    "retry_count": retry_count,
                    "max_retries": max_retries,
                    "allowed_next_stages": (
                        list(allowed_next_stages) if allowed_next_stages is not None else None
                    ),
                    "run_id": run_id,
                    "expires_at": expires_at,
                },
            )
        )

    def get_checkpoint(self: _Sends, task_key: str) -> Checkpoint:
        return self.send(_calls.get_checkpoint(task_key))

    def recover(
        self: _Sends,
        task_key: str,
        input_fingerprint: str,
        *,
        triggered_at: datetime | None = None,
        run_id: str = "",
    ) -> Recovery:
        """What to do after a crash: fresh, resume, verify_only, no_op, escalate, compensate,
        wait or in_progress.

        `triggered_at` (when the run was triggered) lets memdesk measure how long the
        decision took from the trigger, not only from this request. `run_id` makes the
        run that is sent to act hold the task's recovery lease: another run is told
        `in_progress` meanwhile (release it with `release_recovery` when done)."""
        return self.send(_calls.recover(task_key, input_fingerprint, triggered_at, run_id))

    def release_recovery(self: _Sends, task_key: str, run_id: str) -> dict[str, Any]:
        """The run that holds `task_key`'s recovery lease is done: the next trigger may decide
        at once instead of waiting for the lease to expire."""
        return self.send(_calls.release_recovery(task_key, run_id))

    def judge_recovery(
        self: _Sends, answer_id: int, expected: str, *, note: str = ""
    ) -> dict[str, Any]:
        """Say what recovery answer `answer_id` (a `Recovery`'s `answer_id`) should have
        been: a replay that knows the right answer feeds memdesk's recovery correctness."""
        return self.send(_calls.judge_recovery(answer_id, expected, note))


class AsyncRecoveryMethods:
    """Where a task stands, and what to do after a crash (awaitable)."""

    async def checkpoint(
        self: _SendsAsync,
        task_key: str,
        *,
        input_fingerprint: str,
        stage: str,
        stage_complete: bool | None = None,
        effects: Iterable[str] | None = None,
        retry_count: int | None = None,
        max_retries: int | None = None,
        allowed_next_stages: Iterable[str] | None = None,
        run_id: str | None = None,
        expires_at: str | None = None,
    ) -> Checkpoint:
        """Save where a task stands (create or replace). `effects` are receipt ids."""
        return await self.send(
            _calls.save_checkpoint(
                task_key,
                {
                    "input_fingerprint": input_fingerprint,
                    "stage": stage,
                    "stage_complete": stage_complete,
                    "effects": list(effects) if effects is not None else None,
                    "retry_count": retry_count,
                    "max_retries": max_retries,
                    "allowed_next_stages": (
                        list(allowed_next_stages) if allowed_next_stages is not None else None
                    ),
                    "run_id": run_id,
                    "expires_at": expires_at,
                },
            )
        )

    async def get_checkpoint(self: _SendsAsync, task_key: str) -> Checkpoint:
        return await self.send(_calls.get_checkpoint(task_key))

    async def recover(
        self: _SendsAsync,
        task_key: str,
        input_fingerprint: str,
        *,
        triggered_at: datetime | None = None,
        run_id: str = "",
    ) -> Recovery:
        """What to do after a crash: fresh, resume, verify_only, no_op, escalate, compensate,
        wait or in_progress.

        `triggered_at` (when the run was triggered) lets memdesk measure how long the
        decision took from the trigger, not only from this request. `run_id` makes the
        run that is sent to act hold the task's recovery lease: another run is told
        `in_progress` meanwhile (release it with `release_recovery` when done)."""
        return await self.send(_calls.recover(task_key, input_fingerprint, triggered_at, run_id))

    async def release_recovery(self: _SendsAsync, task_key: str, run_id: str) -> dict[str, Any]:
        """The run that holds `task_key`'s recovery lease is done: the next trigger may decide
        at once instead of waiting for the lease to expire."""
        return await self.send(_calls.release_recovery(task_key, run_id))

    async def judge_recovery(
        self: _SendsAsync, answer_id: int, expected: str, *, note: str = ""
    ) -> dict[str, Any]:
        """Say what recovery answer `answer_id` (a `Recovery`'s `answer_id`) should have
        been: a replay that knows the right answer feeds memdesk's recovery correctness."""
        return await self.send(_calls.judge_recovery(answer_id, expected, note))
