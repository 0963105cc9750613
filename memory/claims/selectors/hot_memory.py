"""Hot memory: the block of a subject's standing claims an agent keeps in its context,
rendered as it is handed over, cached by version, and judged as rendered."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.db.models import Count, Max, Q
from django.utils import timezone

from accounts.models import Tenant
from common.hidden_chars import for_agent
from common.screen.injection import judge_injection, judge_injection_many
from common.screen.learned import PASS, Bands
from memory.claims.models import (
    AUTHORITY_RANK_SQL,
    Claim,
    ClaimKind,
    ClaimStatus,
    RecallUse,
    Subject,
    TraceKind,
)
from memory.claims.selectors.recall_ranking import TRACE_TABLE, USE_TABLE
from memory.claims.selectors.screening import screen_bands

# What a block may hold: standing facts and preferences, true for weeks. Experiences (what
# a run did and how it went) and summaries (a condensed stretch of work) are found by
# recall when a question needs them; an agent's every turn never carries them.
HOT_MEMORY_KINDS = (ClaimKind.FACT, ClaimKind.PREFERENCE)


@dataclass(frozen=True)
class HotMemory:
    text: str
    etag: str
    claim_ids: tuple[str, ...]


def _hot_memory_version(*, tenant: Tenant, subject: Subject) -> str:
    # Derived from the claims themselves, so no missed invalidation can serve
    # an old block: any write to a claim of the subject moves updated_at. The
    # newest use report of the subject's blocks is part of it, since reports
    # decide demotion. Only the kinds a block holds count: logging an experience leaves
    # the block, and its cache, as they are.
    row = Claim.objects.filter(tenant=tenant, subject=subject, kind__in=HOT_MEMORY_KINDS).aggregate(
        latest=Max("updated_at"), n=Count("id")
    )
    reported = RecallUse.objects.filter(
        tenant=tenant, trace__subject=subject, trace__kind=TraceKind.HOT_MEMORY
    ).aggregate(newest=Max("id"))["newest"]
    latest = row["latest"].isoformat() if row["latest"] else "-"
    return f"{latest}:{row['n']}:{reported or 0}"


def hot_memory_demoted(*, tenant: Tenant, subject: Subject) -> set[Any]:
    """Claims demoted out of the subject's hot memory: in the last `HOT_MEMORY_DEMOTE_DAYS`,
    handed to agents in at least `HOT_MEMORY_DEMOTE_AFTER_UNUSED` hot-memory blocks that
    they reported on, and never reported used there. Recall still finds them; a report
    of use (or fewer unused blocks in the window) brings them back. One statement."""
    needed = settings.HOT_MEMORY_DEMOTE_AFTER_UNUSED
    if needed <= 0:
        return set()
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH reported AS (
                SELECT t.id, t.chosen FROM {TRACE_TABLE} t
                WHERE t.tenant_id = %(tenant)s AND t.subject_id = %(subject)s
                  AND t.kind = %(kind)s AND t.created_at >= %(since)s
                  AND EXISTS (SELECT 1 FROM {USE_TABLE} u WHERE u.tenant_id = t.tenant_id
                                                        AND u.trace_id = t.id)
            ), handed AS (
                SELECT r.id AS trace_id, c AS claim_id FROM reported r, unnest(r.chosen) AS c
            )
            SELECT h.claim_id FROM handed h
            GROUP BY h.claim_id
            HAVING count(*) >= %(needed)s AND NOT EXISTS (
                SELECT 1 FROM {USE_TABLE} u JOIN reported r ON r.id = u.trace_id
                WHERE u.tenant_id = %(tenant)s AND u.claim_id = h.claim_id)
            """,  # noqa: S608 - table names are constants; every value is a parameter
            {
                "tenant": tenant.pk,
                "subject": subject.pk,
                "kind": TraceKind.HOT_MEMORY,
                "since": timezone.now() - timedelta(days=settings.HOT_MEMORY_DEMOTE_DAYS),
                "needed": needed,
            },
        )
        return {row[0] for row in cursor.fetchall()}


def _render_hot_memory(
    *, tenant: Tenant, subject: Subject, budget_chars: int, scope: dict[str, str] | None
) -> HotMemory:
    now = timezone.now()
    current = Claim.objects.filter(
        Q(valid_from__isnull=True) | Q(valid_from__lte=now),
        Q(valid_to__isnull=True) | Q(valid_to__gt=now),
        Q(expires_at__isnull=True) | Q(expires_at__gt=now),
        Q(refresh_after__isnull=True) | Q(refresh_after__gt=now),
        tenant=tenant,
        subject=subject,
        status=ClaimStatus.ACTIVE,
        kind__in=HOT_MEMORY_KINDS,
    )
    if scope is not None:
        # Fail closed: only claims whose scope the asked-for scope contains (global
        # claims always); of those on one predicate, only the most specific — a
        # project's own setting replaces the global one instead of standing beside it.
        current = Claim.objects.filter(
            pk__in=current.filter(scope__contained_by=scope)
            .order_by("predicate", "-scope_size", "-recorded_at")
            .distinct("predicate")
            .values("id")
        )
    demoted = hot_memory_demoted(tenant=tenant, subject=subject) if scope is not None else set()
    claims = (
        current.exclude(pk__in=demoted)
        .annotate(authority_rank=AUTHORITY_RANK_SQL)
        .order_by("-authority_rank", "-use_count", "-recorded_at")
        .only("id", "predicate", "text", "value", "scope")[:200]
    )
    # The block is handed to an agent as it is: no hidden characters (`for_agent`).
    header = for_agent(f"Memory about {subject.key}:")
    lines: list[str] = []
    ids: list[str] = []
    used = len(header)
    for claim in claims:
        statement = claim.text or f"{claim.predicate}: {claim.value}"
        label = ", ".join(f"{k}={v}" for k, v in sorted(claim.scope.items()))
        line = for_agent(f"- {statement}" + (f" [{label}]" if label else ""))
        if used + 1 + len(line) > budget_chars:
            continue
        used += 1 + len(line)
        lines.append(line)
        ids.append(str(claim.id))
    lines, ids = _without_orders(header, lines, ids, bands=screen_bands(tenant=tenant))
    text = "\n".join([header, *lines]) if lines and len(header) <= budget_chars else ""
    etag = hashlib.sha256(text.encode()).hexdigest()[:32]
    return HotMemory(text=text, etag=etag, claim_ids=tuple(ids))


def _reads_as_order(header: str, lines: list[str], bands: Bands | None) -> bool:
    return judge_injection(["\n".join([header, *lines])], bands=bands).is_injection


def _without_orders(
    header: str, lines: list[str], ids: list[str], *, bands: Bands | None
) -> tuple[list[str], list[str]]:
    """The block's lines, judged as the agent will read them: together.

    Each claim passed the screen alone; read one after another, lines can still
    complete an order none of them is. Then the lines the screen doubts on their
    own are left out, and, while the block still reads as an order, the last line.
    """
    if not lines or not _reads_as_order(header, lines, bands):
        return lines, ids
    doubted = judge_injection_many([[line] for line in lines], bands=bands)
    kept = [(line, i) for line, i, r in zip(lines, ids, doubted, strict=True) if r.band == PASS]
    while (
        kept
        and judge_injection(
            ["\n".join([header, *(ln for ln, _ in kept)])], bands=bands
        ).is_injection
    ):
        kept.pop()
    return [line for line, _ in kept], [i for _, i in kept]


def hot_memory_cache_prefix(*, tenant_id: int, subject_id: int) -> str:
    """Every cached block of a subject starts with this, so erasure can purge them all."""
    return f"hot-memory:{tenant_id}:{subject_id}:"


EVERY_SCOPE = None


# Part of each block's cache key: a block cached before hidden characters were
# removed from the text (`for_agent`), or before blocks held facts and preferences
# only, is never served again.
_BLOCK_FORMAT = "visible-standing"


def hot_memory(
    *,
    tenant: Tenant,
    subject: Subject,
    budget_chars: int,
    scope: dict[str, str] | None = EVERY_SCOPE,
) -> HotMemory:
    """The subject's block for `scope` (`{}`: global claims only). `EVERY_SCOPE` mixes
    every scope's claims: what the deletion probes and consolidation's rebuild read,
    never what an agent is handed."""
    version = _hot_memory_version(tenant=tenant, subject=subject)
    prefix = hot_memory_cache_prefix(tenant_id=tenant.pk, subject_id=subject.pk)
    scope_digest = hashlib.sha256(json.dumps(scope, sort_keys=True).encode()).hexdigest()[:16]
    # json.dumps(None) is "null": the every-scope block never shares a key with a scope's.
    demotion = f"{settings.HOT_MEMORY_DEMOTE_AFTER_UNUSED}-{settings.HOT_MEMORY_DEMOTE_DAYS}"
    key = f"{prefix}{budget_chars}:{scope_digest}:{demotion}:{_BLOCK_FORMAT}:{version}"
    cached = cache.get(key)
    if cached is not None:
        return HotMemory(**cached)
    block = _render_hot_memory(
        tenant=tenant, subject=subject, budget_chars=budget_chars, scope=scope
    )
    cache.set(key, {"text": block.text, "etag": block.etag, "claim_ids": block.claim_ids}, 3600)
    return block
