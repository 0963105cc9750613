"""The end user's console: what is remembered about them, corrections, deletions."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from accounts.access import console_context
from accounts.actors import Actor
from accounts.models import Membership
from accounts.selectors import audit_trail, owned_subject_keys
from common.htmx import is_htmx, render_page
from common.problems import Problem
from memory.models import Event
from memory.models.lifecycle import DeletionStatus
from memory.selectors.deletion import deletion_get
from memory.selectors.me import me_memories, me_memory_get, me_subjects
from memory.services.corrections import memory_correct
from memory.services.deletion import deletion_request_create

FINISHED = {DeletionStatus.COMPLETED, DeletionStatus.FAILED}


def _actor(request: HttpRequest, membership: Membership) -> Actor:
    return Actor.for_user(request.user, membership.role)


def _page_context(request: HttpRequest, membership: Membership) -> dict[str, Any]:
    subjects = list(me_subjects(tenant=membership.tenant, user=request.user))
    memories = list(
        me_memories(tenant=membership.tenant, user=request.user).prefetch_related("sources")
    )
    owned = owned_subject_keys(tenant=membership.tenant, user=request.user)
    return {"subjects": subjects, "memories": memories, "owned_keys": owned}


@login_required
@require_GET
def me(request: HttpRequest) -> HttpResponse:
    membership = console_context(request)
    return render_page(
        request, "memory/me.html", _page_context(request, membership), partial="memories"
    )


def _memory_or_404(request: HttpRequest, membership: Membership, claim_id: Any) -> Any:
    claim = me_memory_get(tenant=membership.tenant, user=request.user, claim_id=claim_id)
    if claim is None:
        raise Http404("no such memory")
    return claim


@login_required
@require_GET
def memory_detail(request: HttpRequest, claim_id: Any) -> HttpResponse:
    membership = console_context(request)
    claim = _memory_or_404(request, membership, claim_id)
    context = {
        "memory": claim,
        "audit": list(
            audit_trail(tenant=membership.tenant, target_type="claim", target_id=claim.pk)
        ),
        "editing": request.GET.get("edit") == "1",
    }
    return render_page(request, "memory/memory.html", context, partial="memory")


@login_required
@require_POST
def memory_correct_view(request: HttpRequest, claim_id: Any) -> HttpResponse:
    membership = console_context(request)
    claim = _memory_or_404(request, membership, claim_id)
    text = request.POST.get("text", "").strip()
    value = request.POST.get("value", "").strip() or text
    error = None
    if not text:
        error = "Write the corrected statement."
    else:
        try:
            claim = memory_correct(
                tenant=membership.tenant,
                actor=_actor(request, membership),
                claim_id=claim.pk,
                value=value,
                text=text,
            )
        except Problem as problem:
            error = str(problem.detail)
    if error is None:
        messages.success(request, "Corrected. Agents recall the new statement from now on.")
    context = {
        "memory": claim,
        "audit": list(
            audit_trail(tenant=membership.tenant, target_type="claim", target_id=claim.pk)
        ),
        "editing": error is not None,
        "error": error,
    }
    if is_htmx(request):
        return render_page(request, "memory/memory.html", context, partial="memory")
    if error:
        messages.error(request, error)
    return redirect("memory:me")


def _start_deletion(request: HttpRequest, membership: Membership, **target: Any) -> HttpResponse:
    deletion, _created = deletion_request_create(
        tenant=membership.tenant,
        actor=_actor(request, membership),
        requested_by=request.user,
        **target,
    )
    messages.success(request, "Deletion started. This page follows it to the end.")
    url = f"/me/deletions/{deletion.pk}/"
    if is_htmx(request):
        response = HttpResponse(status=204)
        response["HX-Redirect"] = url
        return response
    return redirect(url)


@login_required
@require_POST
def memory_delete(request: HttpRequest, claim_id: Any) -> HttpResponse:
    membership = console_context(request)
    claim = _memory_or_404(request, membership, claim_id)
    return _start_deletion(request, membership, subject=claim.subject, claim=claim)


@login_required
@require_POST
def delete_everything(request: HttpRequest) -> HttpResponse:
    membership = console_context(request)
    subjects = list(me_subjects(tenant=membership.tenant, user=request.user))
    key = request.POST.get("subject", "")
    subject = next((s for s in subjects if s.key == key), None)
    if subject is None or request.POST.get("confirm") != key:
        messages.error(request, "To delete everything, type the subject's name exactly.")
        return redirect("memory:me")
    return _start_deletion(request, membership, subject=subject)


@login_required
@require_GET
def deletion_view(request: HttpRequest, deletion_id: Any) -> HttpResponse:
    membership = console_context(request)
    deletion = deletion_get(
        tenant=membership.tenant,
        user=request.user,
        role=membership.role,
        deletion_id=deletion_id,
    )
    if deletion is None:
        raise Http404("no such deletion")
    context = {
        "deletion": deletion,
        "finished": deletion.status in FINISHED,
        "probes": deletion.report.get("probes", []),
        "artifacts": deletion.report.get("artifacts", {}),
        "audit": list(
            audit_trail(tenant=membership.tenant, target_type="deletion", target_id=deletion.pk)
        ),
    }
    return render_page(request, "memory/deletion.html", context, partial="progress")


@login_required
@require_GET
def event_view(request: HttpRequest, event_id: Any) -> HttpResponse:
    """A source event of one of the user's memories, as it is stored (or its tombstone)."""
    membership = console_context(request)
    subjects = me_subjects(tenant=membership.tenant, user=request.user)
    event = Event.objects.filter(
        tenant=membership.tenant, pk=event_id, subject__in=subjects
    ).first()
    if event is None:
        raise Http404("no such event")
    return render_page(request, "memory/event.html", {"event": event})
