"""Redis keys for the resolve cache and the pin throttle.

Resolve answers are cached under a per-skill *generation*. Every change that
alters what a resolve returns (a label move, revoke, deprecate) bumps the
generation after commit, so old entries are never read again and simply
expire. Nothing is deleted key by key, so no race can resurrect a stale entry:
a reader that fetched the old generation before the bump writes its answer
under the old generation, where nobody looks any more.

Redis only speeds things up (docs/architecture.md: losing it loses no data). When it is
unreachable, resolves are computed from PostgreSQL and pins are written
without throttling; a generation bump that cannot reach Redis is logged, and
the short entry lifetime bounds how long a stale answer could survive it.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from typing import Any

from django.core.cache import cache
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

RESOLVE_TIMEOUT_SECONDS = 300
# A generation only has to outlive the entries written under it; when it
# expires, the next one starts fresh (see _generation).
GENERATION_TIMEOUT_SECONDS = 24 * 3600
# Bumped whenever the cached ResolvedVersion changes shape, so a deploy never
# reads entries written by the previous release.
RESOLVE_FORMAT = 1
# A pin's last_seen_at is written at most this often per (version, instance),
# so a hot loop of loads costs one Redis round trip, not one row update each.
PIN_TOUCH_SECONDS = 60


def _generation_key(tenant_id: int, slug: str) -> str:
    return f"skills:gen:{tenant_id}:{slug}"


def _generation(*, tenant_id: int, slug: str) -> int:
    key = _generation_key(tenant_id, slug)
    generation = cache.get(key)
    if generation is None:
        # A fresh generation starts at the clock in nanoseconds, never a
        # small number, so a generation evicted from Redis cannot come back
        # as a value that old entries were written under.
        candidate = time.time_ns()
        if cache.add(key, candidate, timeout=GENERATION_TIMEOUT_SECONDS):
            return candidate
        generation = cache.get(key) or candidate
    return int(generation)


def cached_resolve(
    *, tenant_id: int, slug: str, selector: str, compute: Callable[[], dict[str, Any]]
) -> dict[str, Any]:
    """The cached answer for ``selector`` of a skill, computed and stored on a miss."""
    try:
        generation = _generation(tenant_id=tenant_id, slug=slug)
        key = f"skills:resolve:{RESOLVE_FORMAT}:{tenant_id}:{slug}:{generation}:{selector}"
        cached = cache.get(key)
    except RedisError:
        logger.warning("resolve cache unreachable; answering from the database", exc_info=True)
        return compute()
    if cached is None:
        cached = compute()
        try:
            cache.set(key, cached, timeout=RESOLVE_TIMEOUT_SECONDS)
        except RedisError:
            logger.warning("resolve cache unreachable; answer not stored", exc_info=True)
    return cached


def resolve_generation_bump(*, tenant_id: int, slug: str) -> None:
    key = _generation_key(tenant_id, slug)
    try:
        try:
            cache.incr(key)
            cache.touch(key, GENERATION_TIMEOUT_SECONDS)
        except ValueError:
            cache.set(key, time.time_ns(), timeout=GENERATION_TIMEOUT_SECONDS)
    except RedisError:
        logger.error(
            "could not invalidate cached resolves of %s (tenant %s); they expire within %s s",
            slug,
            tenant_id,
            RESOLVE_TIMEOUT_SECONDS,
            exc_info=True,
        )


def pin_touch_due(*, version_id: int, instance: str) -> bool:
    """True at most once per PIN_TOUCH_SECONDS for each (version, instance)."""
    digest = hashlib.sha256(instance.encode()).hexdigest()[:32]
    try:
        return cache.add(f"skills:pin:{version_id}:{digest}", 1, timeout=PIN_TOUCH_SECONDS)
    except RedisError:
        return True
