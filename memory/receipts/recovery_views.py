"""The console page where people judge recovery's answers (docs/reliability.md,
"Recovery correctness").

Editors see the tenant's answers, newest first, and confirm or overturn each: what
recovery should have answered, with a note when it was wrong. The page calls the
same service as `POST /api/v1/recovery/answers/{id}/verdict`.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect
from django.views.decorators.http import require_http_methods

from accounts.access import console_context
from accounts.actors import Actor
from accounts.models import Membership, Role
from common.htmx import render_page
from common.problems import Problem
from memory.receipts.selectors.recovery_log import VerdictFilter, recovery_answers
from memory.receipts.services.recovery import RecoveryDecision
from memory.receipts.services.recovery_log import recovery_verdict_record

PAGE_SIZE = 50
JUDGEABLE = [(value, label) for value, label in RecoveryDecision.choices]


class RecoveryFilterForm(forms.Form):
    decision = forms.ChoiceField(required=False, choices=[("", "Any decision"), *JUDGEABLE])
    verdict = forms.ChoiceField(
        required=False,
        choices=[("", "Any verdict"), *((v, v.capitalize()) for v in VerdictFilter.CHOICES)],
    )
    task_key = forms.CharField(required=False, max_length=255, label="Task key")
    before = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)


class RecoveryVerdictForm(forms.Form):
    expected = forms.ChoiceField(choices=JUDGEABLE, label="Right answer")
    note = forms.CharField(
        required=False,
        max_length=2000,
        widget=forms.TextInput,
        help_text="Why, when the answer was wrong.",
    )


def _filters(query: QueryDict) -> dict[str, Any]:
    form = RecoveryFilterForm(query)
    if not form.is_valid():
        return {}
    return {key: value for key, value in form.cleaned_data.items() if value not in ("", None)}


def _context(request: HttpRequest, membership: Membership) -> dict[str, Any]:
    filters = _filters(request.GET)
    actor = Actor.for_user(request.user, membership.role)
    answers = recovery_answers(
        tenant=membership.tenant, actor=actor, limit=PAGE_SIZE + 1, **filters
    )
    more = len(answers) > PAGE_SIZE
    answers = answers[:PAGE_SIZE]
    query = {k: v for k, v in filters.items() if k != "before"}
    return {
        "answers": answers,
        "filter_form": RecoveryFilterForm(initial=filters),
        "verdict_form": RecoveryVerdictForm(),
        "query": urlencode(query),
        "next_page": urlencode({**query, "before": answers[-1].pk}) if more else "",
    }


@login_required
@require_http_methods(["GET"])
def recovery_index(request: HttpRequest) -> HttpResponse:
    membership = console_context(request, roles=[Role.EDITOR])
    return render_page(
        request, "memory/recovery.html", _context(request, membership), partial="answers"
    )


@login_required
@require_http_methods(["POST"])
def recovery_verdict(request: HttpRequest, answer_id: int) -> HttpResponse:
    membership = console_context(request, roles=[Role.EDITOR])
    form = RecoveryVerdictForm(request.POST)
    back = request.POST.get("query", "")
    if form.is_valid():
        try:
            verdict = recovery_verdict_record(
                tenant=membership.tenant,
                actor=Actor.for_user(request.user, membership.role),
                answer_id=answer_id,
                **form.cleaned_data,
            )
        except Problem as problem:
            messages.error(request, str(problem.detail))
        else:
            word = "Confirmed" if verdict.expected == verdict.answer.decision else "Overturned"
            messages.success(
                request, f"{word} the answer for {verdict.answer.task_key}: {verdict.expected}."
            )
    else:
        messages.error(request, "Choose the right answer.")
    # Back to the list as it was filtered (re-validated: the field is the browser's).
    target = redirect("recovery:index")
    kept = _filters(QueryDict(back))
    if kept:
        target["Location"] += "?" + urlencode(kept)
    return target
