"""Celery discovers `memory.tasks`; each module holds the tasks of one area."""

from memory.tasks import embeddings, exports, lifecycle, recall, receipts  # noqa: F401
