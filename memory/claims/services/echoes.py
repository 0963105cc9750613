"""Echoes: an agent restating what recall just handed it has observed nothing new.

Recall gives an agent "Alice lives in Shanghai"; the agent writes an event "Alice
lives in Shanghai"; a claim citing that event would be memory confirming itself
(docs/recall.md, "Echoes"). Agents mark such events with `echo_of`, but memdesk does
not rely on their word: an event an agent wrote in its own voice (not the user's
channel, not a tool's result) whose text restates a claim recalled for the same
subject within `ECHO_WINDOW` is recorded as an echo of that claim whatever
`echo_of` says. A claim whose every source is an echo is refused as
`self_reinforcement` by the gate.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from accounts.models import Tenant
from memory.claims import gate
from memory.claims.models import Claim, RecallTrace, Subject
from memory.claims.models.outbox import PendingTrace
from memory.claims.search import ngrams

# How long a recalled claim counts as "in the agent's hands".
ECHO_WINDOW = timedelta(hours=24)
# The share of word pieces two texts must share, of the larger set, to say the same.
RESTATES = 0.8
# The most recent traces read: an agent restates what it was given lately.
RECENT_TRACES = 200
# The user's own words and a tool's answer repeating a memory are fresh evidence.
FRESH_EVIDENCE_KINDS = gate.USER_CHANNEL_KINDS | gate.TOOL_RESULT_KINDS


def _recently_recalled(*, tenant: Tenant, subject: Subject, now: datetime) -> set[str]:
    since = now - ECHO_WINDOW
    chosen: set[str] = set()
    written = (
        RecallTrace.objects.filter(
            tenant=tenant, subject=subject, created_at__gte=since, redacted_at__isnull=True
        )
        .order_by("-created_at")
        .values_list("chosen", flat=True)[:RECENT_TRACES]
    )
    for ids in written:
        chosen.update(str(claim_id) for claim_id in ids)
    # Traces a worker has not written yet (the outbox) count as much.
    pending = PendingTrace.objects.filter(
        tenant=tenant, trace__subject_id=subject.pk, created_at__gte=since
    ).values_list("trace__chosen", flat=True)[:RECENT_TRACES]
    for ids in pending:
        chosen.update(str(claim_id) for claim_id in ids or [])
    return chosen


def restates(text: str, other: str) -> bool:
    """Whether two texts say the same thing in nearly the same words."""
    mine, theirs = set(ngrams(text)), set(ngrams(other))
    if not mine or not theirs:
        return False
    return len(mine & theirs) / max(len(mine), len(theirs)) >= RESTATES


def echoes_of(
    *, tenant: Tenant, subject: Subject, kind: str, text: str, now: datetime
) -> list[str]:
    """The recently recalled claims of `subject` that an agent's event text restates."""
    if not text.strip() or kind in FRESH_EVIDENCE_KINDS:
        return []
    recalled = _recently_recalled(tenant=tenant, subject=subject, now=now)
    if not recalled:
        return []
    claims = Claim.objects.filter(tenant=tenant, subject=subject, pk__in=recalled)
    return sorted(
        str(pk) for pk, claim_text in claims.values_list("pk", "text") if restates(text, claim_text)
    )
