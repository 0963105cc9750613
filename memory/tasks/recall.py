"""The Celery task that writes a recall's trace and use counts after the answer went out.

The message carries the whole trace (the request made its id); writing it twice
writes nothing the second time, so a redelivered message is harmless.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task

from memory.services.recall import recall_trace_record


@shared_task(name="memory.record_recall", acks_late=True, reject_on_worker_lost=True)
def record_recall(trace: dict[str, Any]) -> bool:
    return recall_trace_record(trace=trace)
