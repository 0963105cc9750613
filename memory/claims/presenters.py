"""How the review console shows claims: list rows and evidence panes."""

from __future__ import annotations

import json
from typing import Any

from django.db import connection

from accounts.selectors import audit_trail
from memory.claims.models import AUTHORITY_RANK, Authority, Claim, ClaimStatus
from reviews.models import Decision, ReviewItem

# What makes approving a candidate a risk a person must name before taking it: the
# gate held it as an order to future agents, or the screen doubted it.
RISKY_REASONS = {
    "instruction_injection": "the gate quarantined it as an instruction to future agents",
    "injection_in_context": "joined with the subject's recent memories it reads as an instruction",
    "injection_suspected": "the screen suspects an instruction to future agents",
}


def approve_risk(claim: Claim | None) -> str | None:
    """Why approving `claim` is a risk, in words, or None when it is not."""
    if claim is None:
        return None
    reasons = [RISKY_REASONS[r] for r in claim.gate_reasons if r in RISKY_REASONS]
    if claim.status == ClaimStatus.QUARANTINED and not reasons:
        reasons = ["the gate quarantined it"]
    return "; ".join(reasons) or None


def _titles_by_id(items: list[ReviewItem]) -> dict[str, tuple[str, str]]:
    """(statement, status) of each item's claim: only the columns a row shows, so a
    page does not carry 50 claims' vectors and n-grams."""
    if not items:
        return {}
    # Fixed SQL, one parameter per value: every queue page runs it, and the ORM's
    # compilation of the same lookup cost more than the query itself.
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, text, predicate, value, status FROM {Claim._meta.db_table}"  # noqa: S608
            " WHERE tenant_id = %s AND id = ANY(%s::uuid[])",
            [items[0].tenant_id, [item.target_id for item in items]],
        )
        rows = cursor.fetchall()
    # Django's PostgreSQL backend reads jsonb as its text; JSONField decodes it.
    return {
        str(pk): (
            _statement_of(text, predicate, None if value is None else json.loads(value)),
            status,
        )
        for pk, text, predicate, value, status in rows
    }


def _statement_of(text: str, predicate: str, value: Any) -> str:
    return text or f"{predicate}: {value}"


def _statement(claim: Claim) -> str:
    return _statement_of(claim.text, claim.predicate, claim.value)


class ClaimPresenter:
    """Candidates, conflicts and stale claims."""

    def __init__(self, template: str, decide_fields: str | None = None) -> None:
        self.template = template
        self.decide_fields = decide_fields

    def rows(self, *, items: list[ReviewItem]) -> dict[int, dict[str, Any]]:
        titles = _titles_by_id(items)
        rows = {}
        for item in items:
            if (title := titles.get(item.target_id)) is not None:
                rows[item.pk] = {"title": title[0], "status": title[1]}
        return rows

    def detail(self, *, item: ReviewItem) -> tuple[str, dict[str, Any]]:
        claim = (
            Claim.objects.select_related("subject")
            .prefetch_related("sources__event", "derived_from")
            .filter(tenant_id=item.tenant_id, pk=item.target_id)
            .first()
        )
        context: dict[str, Any] = {
            "claim": claim,
            "decide_fields": self.decide_fields,
            # Approving a risky candidate is never the default: no primary button, no `a`
            # shortcut, and a confirmation that names the risk.
            "approve_risk": approve_risk(claim),
        }
        if claim is None:
            return self.template, context
        sides = [claim]
        if claim.conflicts_with:
            sides += list(
                Claim.objects.select_related("subject")
                .prefetch_related("sources__event")
                .filter(tenant_id=item.tenant_id, pk__in=claim.conflicts_with)
            )
        context["sides"] = sides
        if len(sides) > 1:
            context["suggested"], context["suggestion_why"] = suggested_winner(sides)
        active = Claim.objects.filter(
            tenant_id=item.tenant_id, subject_id=claim.subject_id, status=ClaimStatus.ACTIVE
        ).exclude(pk=claim.pk)
        # The same predicate (other scopes, or the fact a candidate would replace)
        # first; failing that, the subject's most recent facts for context.
        context["nearest"] = list(active.filter(predicate=claim.predicate)[:5]) or list(
            active.order_by("-recorded_at")[:5]
        )
        context["audit"] = list(
            audit_trail(tenant=item.tenant, target_type="claim", target_id=claim.pk)
        )
        return self.template, context

    def outcome(self, *, item: ReviewItem, decision: Decision) -> str:
        """Which claim won, lost or stayed, named by what it says."""
        payload = decision.payload or {}
        named = {
            str(c.pk): c
            for c in Claim.objects.filter(
                tenant_id=item.tenant_id,
                pk__in=[
                    v for v in (payload.get("winner"), payload.get("loser"), item.target_id) if v
                ],
            )
        }

        def quote(claim_id: Any) -> str:
            claim = named.get(str(claim_id))
            return f"“{_statement(claim)[:80]}”" if claim else "the claim"

        verdict = decision.verdict
        if verdict == "supersede":
            return f"Kept {quote(payload.get('winner'))}; the other side is superseded."
        if verdict == "keep_both":
            return "Kept both sides, each with its narrower scope."
        if verdict == "reject" and item.queue == "conflicts":
            return (
                f"Rejected {quote(payload.get('loser') or item.target_id)}; the other side stands."
            )
        if verdict == "merge":
            return f"Merged {quote(item.target_id)} into {quote(payload.get('winner'))}."
        words = {
            "approve": "Approved",
            "reject": "Rejected",
            "refresh": "Confirmed as still true:",
            "invalidate": "Marked no longer true:",
        }
        return f"{words.get(verdict, verdict.capitalize())} {quote(item.target_id)}."


def suggested_winner(sides: list[Claim]) -> tuple[Claim, str]:
    """The side the authority rule would keep, and why: the stronger authority, else the
    later observation. A suggestion only; the editor decides."""

    def rank(claim: Claim) -> int:
        return AUTHORITY_RANK.get(Authority(claim.authority), 0)

    best = max(sides, key=lambda c: (rank(c), c.available_at))
    others = [c for c in sides if c.pk != best.pk]
    if all(rank(best) > rank(other) for other in others):
        weaker = ", ".join(sorted({other.authority.replace("_", " ") for other in others}))
        why = (
            f"its authority is {best.authority.replace('_', ' ')}, stronger than {weaker}: "
            "the rule keeps the better-evidenced claim"
        )
    else:
        why = (
            "both sides have the same authority; it was observed later, and the rule "
            "prefers the newer observation"
        )
    return best, why
