"""The Redis client behind Django's default cache, for what the cache API cannot say."""

from __future__ import annotations

from typing import Any

from django.core.cache import cache


def cache_redis() -> Any:
    """The default cache's own redis-py client: the same server and database, and keys
    under the cache's prefix when made with `cache.make_key`.

    Django's cache has no lists, key listing by prefix or scripts. `_cache` is the Redis
    backend's private client holder, which the stubs' generic cache type does not have.
    """
    return cache._cache.get_client(write=True)  # type: ignore[attr-defined]
