"""Celery discovers `memory.tasks`; each module holds the tasks of one area."""

from memory.tasks import embeddings, exports, lifecycle, receipts  # noqa: F401
