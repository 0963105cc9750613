"""The end user's console: what is remembered about them, corrections, deletions, and
"download my data"."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from accounts.access import console_context
from accounts.actors import Actor
from accounts.models import Membership, Role
from accounts.selectors import audit_trail, owned_subject_keys
from common.htmx import is_htmx, render_page
from common.problems import Problem
from memory.claims.models import Event
from memory.claims.services.corrections import CORRECTABLE_STATUSES, memory_correct
from memory.privacy.models import DataExport, ExportStatus
from memory.privacy.models.exports import UNFINISHED_EXPORT_STATUSES
from memory.privacy.models.lifecycle import DeletionStatus
from memory.privacy.plain import artifact_lines, probe_rows
from memory.privacy.selectors.consent import me_consents
from memory.privacy.selectors.deletion import deletion_get, deletions_of_my_subjects
from memory.privacy.selectors.me import (
    me_export_get,
    me_exports,
    me_memories,
    me_memory_get,
    me_subjects,
)
from memory.privacy.services.consent import consents_set
from memory.privacy.services.deletion import deletion_request_create
from memory.privacy.services.exports import (
    export_document,
    export_is_small,
    export_request,
    export_scope,
)

# Nothing more happens by itself: `needs_review` waits for an editor.
FINISHED = {DeletionStatus.COMPLETED, DeletionStatus.FAILED, DeletionStatus.NEEDS_REVIEW}

# The session key naming the deletion just asked for, until its report first shows.
STARTED_DELETION = "memdesk.started_deletion"
# The toast on that first showing, by the deletion's state at that moment.
STARTED_TOASTS = {
    DeletionStatus.COMPLETED: "Deleted. The report below shows where memdesk looked afterwards.",
    DeletionStatus.NEEDS_REVIEW: "Deleted. A check found a possible copy; an editor is looking.",
    DeletionStatus.FAILED: "The deletion did not finish; an editor has been asked to look.",
    "": "Deletion started. This page follows it to the end.",
}


def _actor(request: HttpRequest, membership: Membership) -> Actor:
    return Actor.for_user(request.user, membership.role)


def _rows_context(membership: Membership) -> dict[str, Any]:
    """What every memory row needs: which rows still take a correction or a deletion (the
    others are history), and whether to show the engineer's fields."""
    return {
        "correctable": CORRECTABLE_STATUSES,
        "engineer": membership.role != Role.USER,
        "plain_actors": membership.role == Role.USER,
    }


def _page_context(request: HttpRequest, membership: Membership) -> dict[str, Any]:
    subjects = list(me_subjects(tenant=membership.tenant, user=request.user))
    memories = list(
        me_memories(tenant=membership.tenant, user=request.user).prefetch_related("sources")
    )
    owned = owned_subject_keys(tenant=membership.tenant, user=request.user)
    return {
        "subjects": subjects,
        "memories": memories,
        "owned_keys": owned,
        "exports": list(me_exports(tenant=membership.tenant, user=request.user)[:3]),
        "consents": me_consents(tenant=membership.tenant, user=request.user),
        "my_deletions": list(
            deletions_of_my_subjects(tenant=membership.tenant, user=request.user)[:20]
        ),
        **_rows_context(membership),
    }


@login_required
@require_GET
def me(request: HttpRequest) -> HttpResponse:
    membership = console_context(request)
    return render_page(
        request, "memory/me.html", _page_context(request, membership), partial="memories"
    )


@login_required
@require_POST
def consent_update(request: HttpRequest) -> HttpResponse:
    """Grant or withdraw one class for one of the user's subjects; withdrawal deletes."""
    membership = console_context(request)
    key = request.POST.get("subject", "")
    if key not in owned_subject_keys(tenant=membership.tenant, user=request.user):
        raise Http404("no such subject")
    granted = request.POST.get("granted") == "1"
    sensitivity = request.POST.get("sensitivity", "")
    error = None
    deletions = []
    try:
        outcome = consents_set(
            tenant=membership.tenant,
            actor=_actor(request, membership),
            subject_keys=[key],
            changes={sensitivity: granted},
            user=request.user,
        )
        deletions = outcome.deletions
    except Problem as problem:
        error = str(problem.detail)
    context = {
        "consents": me_consents(tenant=membership.tenant, user=request.user),
        "consent_deletions": deletions,
        "consent_error": error,
        "consent_changed": None if error else (sensitivity, granted),
    }
    if is_htmx(request):
        return render_page(request, "memory/me.html", context, partial="consents")
    if error:
        messages.error(request, error)
    elif deletions:
        messages.success(
            request,
            f"Consent withdrawn. {len(deletions)} memories of this kind are being deleted.",
        )
    else:
        messages.success(request, "Consent granted." if granted else "Consent withdrawn.")
    return redirect("memory:me")


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
        **_rows_context(membership),
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
        "corrected": error is None,
        **_rows_context(membership),
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
    # The report says how it went (it may be finished before the page opens): its first
    # showing picks the toast that matches the deletion's state then.
    request.session[STARTED_DELETION] = str(deletion.pk)
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
    if not is_htmx(request) and request.session.get(STARTED_DELETION) == str(deletion.pk):
        del request.session[STARTED_DELETION]
        messages.success(request, STARTED_TOASTS.get(deletion.status, STARTED_TOASTS[""]))
    probes = deletion.report.get("probes", [])
    artifacts = deletion.report.get("artifacts", {})
    context = {
        "deletion": deletion,
        "finished": deletion.status in FINISHED,
        "probes": probes,
        "artifacts": artifacts,
        "places": probe_rows(probes),
        "touched": artifact_lines(artifacts),
        # The SQL, digests, counters and storage details are for those who work deletions.
        "engineer": membership.role != Role.USER,
        "plain_actors": membership.role == Role.USER,
        "horizon": deletion.report.get("horizon", {}),
        "backups_until": (deletion.report.get("horizon", {}).get("wal_and_backups") or {}).get(
            "until", ""
        ),
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
    context = {"event": event, "engineer": membership.role != Role.USER}
    return render_page(request, "memory/event.html", context)


def _attachment(content: str, *, at: Any) -> HttpResponse:
    response = HttpResponse(content, content_type="application/json")
    response["Content-Disposition"] = (
        f'attachment; filename="memdesk-export-{at:%Y%m%d-%H%M%S}.json"'
    )
    response["Cache-Control"] = "private, no-store"
    return response


@login_required
@require_POST
def export_start(request: HttpRequest) -> HttpResponse:
    """The "Download my data" button: the file at once when it is small, else a page that
    follows the worker making it."""
    membership = console_context(request)
    scope = export_scope(tenant=membership.tenant, user=request.user)
    if export_is_small(tenant=membership.tenant, scope=scope):
        content = export_document(tenant=membership.tenant, user=request.user, scope=scope)
        return _attachment(content, at=timezone.now())
    export, _created = export_request(
        tenant=membership.tenant,
        actor=_actor(request, membership),
        user=request.user,
        scope=scope,
    )
    url = f"/me/exports/{export.pk}/"
    if is_htmx(request):
        response = HttpResponse(status=204)
        response["HX-Redirect"] = url
        return response
    return redirect(url)


def _export_or_404(request: HttpRequest, membership: Membership, export_id: Any) -> DataExport:
    export = me_export_get(tenant=membership.tenant, user=request.user, export_id=export_id)
    if export is None:
        raise Http404("no such export")
    return export


@login_required
@require_GET
def export_view(request: HttpRequest, export_id: Any) -> HttpResponse:
    membership = console_context(request)
    export = _export_or_404(request, membership, export_id)
    percent = 100 if export.status == ExportStatus.READY else 0
    if export.rows_total and export.status in UNFINISHED_EXPORT_STATUSES:
        percent = min(99, export.rows_done * 100 // export.rows_total)
    context = {
        "export": export,
        "unfinished": export.status in UNFINISHED_EXPORT_STATUSES,
        "downloadable": export.status == ExportStatus.READY and export.expires_at > timezone.now(),
        "percent": percent,
    }
    return render_page(request, "memory/export.html", context, partial="progress")


@login_required
@require_GET
def export_file(request: HttpRequest, export_id: Any) -> HttpResponse:
    membership = console_context(request)
    export = _export_or_404(request, membership, export_id)
    if export.status != ExportStatus.READY or export.expires_at <= timezone.now():
        messages.error(request, "This export cannot be downloaded any more. Ask for a new one.")
        return redirect(f"/me/exports/{export.pk}/")
    return _attachment(export.content, at=export.finished_at or export.created_at)
