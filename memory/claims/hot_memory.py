"""Hot memory as cached in Redis: list, read and purge a subject's cached blocks.

Erasure and corrections purge a subject's blocks; the deletion probes read
what is left of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from django.core.cache import cache

from common.redis import cache_redis
from memory.claims.selectors.hot_memory import hot_memory_cache_prefix


def _chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def hot_memory_cache_keys(*, tenant_id: int, subject_id: int) -> list[bytes]:
    """The full Redis keys of every cached hot-memory block of a subject."""
    prefix = cache.make_key(hot_memory_cache_prefix(tenant_id=tenant_id, subject_id=subject_id))
    return list(cache_redis().scan_iter(match=f"{prefix}*", count=1000))


def cached_hot_memory_blocks(*, tenant_id: int, subject_id: int) -> list[dict[str, Any]]:
    offset = len(cache.make_key(""))
    blocks = []
    for key in hot_memory_cache_keys(tenant_id=tenant_id, subject_id=subject_id):
        block = cache.get(key.decode()[offset:])
        if block is not None:
            blocks.append(block)
    return blocks


def hot_memory_purge(*, tenant_id: int, subject_ids: Iterable[int]) -> int:
    """Delete every cached hot-memory block of these subjects. Returns the keys deleted.

    A changed claim already moves the block's version key, but the old block
    still holds its text in Redis until it expires; erasure cannot wait.
    """
    client = cache_redis()
    purged = 0
    for subject_id in sorted(set(subject_ids)):
        keys = hot_memory_cache_keys(tenant_id=tenant_id, subject_id=subject_id)
        for batch in _chunks(keys, 500):
            purged += client.delete(*batch)
    return purged
