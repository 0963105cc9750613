"""The editors' memory desk: recall traces, where a claim was used, and what it was worth.

Read-only pages for the console's readers (editors, admins, auditors); they
read through the same selectors as `GET /api/v1/recall/traces/{id}`.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from accounts.access import CONSOLE_READERS, console_context
from accounts.actors import Actor
from accounts.models import Role
from common.htmx import render_page
from common.problems import Problem
from memory.claims.forms import LedgerSearchForm
from memory.claims.selectors.claims import EXCLUSION_REASONS, claim_get, subject_get
from memory.claims.selectors.counterfactual import recall_counterfactual, replayable
from memory.claims.selectors.ledger_search import (
    LedgerScope,
    ledger_browse,
    ledger_discover,
    ledger_scroll,
)
from memory.claims.selectors.traces import (
    claim_recall_rows,
    claim_value,
    recall_trace_detail,
    recall_trace_get,
)
from memory.claims.services.archive import claim_archive, claim_restore
from memory.claims.services.subjects import parse_subject_key

SIGNAL_ORDER = ("fulltext", "ngram", "vector", "recency", "authority")


def signal_list(signals: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    """A claim's ranking signals in a fixed order, for a compact row of chips."""
    return [
        {"name": name, "rank": signals[name].get("rank"), "score": signals[name].get("score")}
        for name in SIGNAL_ORDER
        if name in signals
    ]


@login_required
@require_GET
def trace_view(request: HttpRequest, trace_id: Any) -> HttpResponse:
    membership = console_context(request, roles=CONSOLE_READERS)
    trace = recall_trace_get(tenant=membership.tenant, trace_id=trace_id, allowed_subjects=None)
    if trace is None:
        raise Http404("No such trace.")
    detail = recall_trace_detail(tenant=membership.tenant, trace=trace)
    for entry in [*detail["returned"], *detail["cut"]]:
        entry["signal_list"] = signal_list(entry["signals"])
    counts = detail["legal_set"]["excluded"]
    # The legal-set rules that excluded something; `no_match` and `over_budget` count
    # claims inside the legal set and are shown where they belong.
    excluded = [(reason, counts[reason]) for reason in EXCLUSION_REASONS if counts.get(reason)]
    return render_page(
        request,
        "memory/desk/trace.html",
        {
            "trace": detail,
            "excluded": excluded,
            "no_match": counts.get("no_match"),
            "raw": trace,
        },
    )


@login_required
@require_GET
def claim_usage_view(request: HttpRequest, claim_id: Any) -> HttpResponse:
    membership = console_context(request, roles=CONSOLE_READERS)
    claim = claim_get(tenant=membership.tenant, claim_id=claim_id, allowed_subjects=None)
    if claim is None:
        raise Http404("No such claim.")
    rows = claim_recall_rows(tenant=membership.tenant, claim_id=claim.pk)
    return render_page(
        request,
        "memory/desk/claim.html",
        {
            "claim": claim,
            "value": claim_value(tenant=membership.tenant, claim_id=claim.pk),
            "rows": rows,
        },
    )


LEDGER_PAGE = 100


@login_required
@require_GET
def ledger_view(request: HttpRequest) -> HttpResponse:
    """Session search for editors: the selectors behind `GET /api/v1/events/search`."""
    membership = console_context(request, roles=CONSOLE_READERS)
    form = LedgerSearchForm(request.GET or None)
    context: dict[str, Any] = {"form": form, "searched": False}
    if form.is_valid():
        values = form.cleaned_data
        mode = values["mode"] or ("discovery" if values["q"] else "browse")
        try:
            parse_subject_key(values["subject"])
        except Problem as problem:
            form.add_error("subject", str(problem.detail))
            return render_page(request, "memory/desk/ledger.html", context, partial="results")
        subject = subject_get(tenant=membership.tenant, key=values["subject"])
        scope = LedgerScope(tenant=membership.tenant, subjects=[subject] if subject else [])
        context.update({"searched": True, "mode": mode, "values": values})
        if mode == "discovery" and values["q"].strip():
            found = ledger_discover(scope=scope, query=values["q"])
            context.update({"runs": found.runs, "semantic": found.semantic})
        elif mode == "scroll" and values["run_id"]:
            after = values["after"] or 0
            events, more = ledger_scroll(
                scope=scope, run_id=values["run_id"], after=after, limit=LEDGER_PAGE
            )
            context.update({"events": events, "more": more})
            if more and events:
                following = request.GET.copy()
                following["after"] = str(events[-1].position)
                context["next_query"] = following.urlencode()
        else:
            context.update({"mode": "browse", "summaries": ledger_browse(scope=scope)})
    return render_page(request, "memory/desk/ledger.html", context, partial="results")


@login_required
@require_GET
def counterfactual_view(request: HttpRequest, trace_id: Any) -> HttpResponse:
    """What the agent would have seen without a claim (or with it stale): the trace replayed
    twice, side by side. Read-only, like the API's counterfactual."""
    membership = console_context(request, roles=CONSOLE_READERS)
    trace = recall_trace_get(tenant=membership.tenant, trace_id=trace_id, allowed_subjects=None)
    if trace is None:
        raise Http404("No such trace.")
    change = request.GET.get("change", "hide")
    claim = None
    claim_id = request.GET.get("claim", "")
    try:
        claim = claim_get(tenant=membership.tenant, claim_id=UUID(claim_id), allowed_subjects=None)
    except ValueError:
        claim = None
    if claim is None or claim.subject_id != trace.subject_id or change not in ("hide", "stale"):
        raise Http404("Choose a claim of the trace's subject, and hide or stale.")
    try:
        replayable(trace)
    except Problem as problem:
        return render_page(
            request,
            "memory/desk/counterfactual.html",
            {"trace": trace, "claim": claim, "problem": problem.detail},
            status=409,
        )
    found = recall_counterfactual(tenant=membership.tenant, trace=trace, claim=claim, change=change)
    removed, added = set(found.removed), set(found.added)
    return render_page(
        request,
        "memory/desk/counterfactual.html",
        {
            "trace": trace,
            "claim": claim,
            "found": found,
            "baseline": [(item, str(item.claim.id) in removed) for item in found.baseline.items],
            "changed": [(item, str(item.claim.id) in added) for item in found.changed.items],
        },
    )


@login_required
@require_POST
def claim_archive_view(request: HttpRequest, claim_id: Any) -> HttpResponse:
    """Archive (`action=archive`) or restore (`action=restore`) a claim, then show its page."""
    membership = console_context(request, roles=[Role.EDITOR])
    claim = claim_get(tenant=membership.tenant, claim_id=claim_id, allowed_subjects=None)
    if claim is None:
        raise Http404("No such claim.")
    actor = Actor.for_user(request.user, membership.role)
    move = claim_restore if request.POST.get("action") == "restore" else claim_archive
    try:
        moved = move(tenant=membership.tenant, actor=actor, claim_id=claim.pk)
    except Problem as problem:
        messages.error(request, str(problem.detail))
    else:
        messages.success(request, f"The claim is {moved.status}.")
    return redirect("desk:claim", claim_id=claim.pk)
