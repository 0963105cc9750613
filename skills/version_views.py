"""A skill version in the console: its page (matrix, cost curve, approvals, diff against
production), the actions a person may take on it, and its files, shown inert."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from accounts.access import CONSOLE_READERS, console_context
from accounts.actors import Actor
from accounts.models import Membership, Role
from accounts.selectors import audit_trail
from common.htmx import render_page
from common.problems import Problem
from skills import selectors, services
from skills.charts import cost_chart, matrix_rows
from skills.forms import (
    ACTIONS,
    ActionForm,
)
from skills.inert import inert_file_response, is_text
from skills.models import Skill, SkillFile, SkillVersion, VersionStatus
from skills.views import (
    FILE_PREVIEW_BYTES,
    PINS_SHOWN,
    answer,
    console_actor,
    skill_for,
    version_for,
)


def _version_context(
    request: HttpRequest,
    membership: Membership,
    skill: Skill,
    version: SkillVersion,
    *,
    failed_form: ActionForm | None = None,
) -> dict[str, Any]:
    tenant = membership.tenant
    is_admin = membership.role == Role.ADMIN
    actor = console_actor(request, membership)
    forms: list[ActionForm] = []
    if is_admin:
        for next_status in services.allowed_next(version.status):
            # `incompatible` is reached by retiring a tool, not by a button here.
            action = ACTIONS.get(next_status)
            if action is None:
                continue
            if failed_form is not None and failed_form.action == action:
                forms.append(failed_form)
            else:
                forms.append(ActionForm(action=action, prefix=action))
    matrix = selectors.evaluation_matrix(tenant=tenant, version=version)
    sources = list(selectors.draft_sources(tenant=tenant, version=version))
    claims = selectors.draft_source_claims(tenant=tenant, sources=sources)
    draft_sources = [
        {
            "claim_id": source.claim_id,
            "source_deleted_at": source.source_deleted_at,
            "claim": claims.get(str(source.claim_id)),
        }
        for source in sources
    ]
    production = selectors.production_version(tenant=tenant, skill=skill)
    compare_to = production if production is not None and production.pk != version.pk else None
    if compare_to is None and version.number > 1:
        compare_to = selectors.skill_version_get(
            tenant=tenant, skill=skill, number=version.number - 1
        )
    return {
        "skill": skill,
        "version": version,
        "is_admin": is_admin,
        "is_author": services.is_author(actor, tenant=tenant, version=version),
        "approval": selectors.approval_progress(tenant=tenant, version=version),
        "action_forms": forms,
        "production": production,
        "compare_to": compare_to,
        "changes": selectors.sensitive_changes_against_production(tenant=tenant, version=version),
        "matrix": matrix,
        "matrix_rows": matrix_rows(matrix),
        "baseline": selectors.baseline_comparison(
            matrix=matrix, cost_factor=settings.SKILL_BASELINE_COST_FACTOR
        ),
        "controls": selectors.evaluation_controls(tenant=tenant, version=version),
        "cost_curve": cost_chart(
            selectors.cost_curve(tenant=tenant, skill=skill), current=version.number
        ),
        "files": list(selectors.version_files(tenant=tenant, version=version)),
        "instances_last_24h": selectors.pins_recent_count(tenant=tenant, version=version),
        "draft_sources": draft_sources,
        "sources_deleted": any(source.source_deleted_at for source in sources),
        "withheld": selectors.content_withheld(version=version),
        "loads": selectors.version_load_totals(tenant=tenant, version=version),
        "pins": list(selectors.version_pins(tenant=tenant, version=version)[:PINS_SHOWN]),
        "trail": list(
            audit_trail(tenant=tenant, target_type="skill_version", target_id=version.pk)
        ),
    }


@login_required
@require_GET
def version_detail(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    membership = console_context(request, roles=CONSOLE_READERS)
    skill = skill_for(membership, slug)
    version = version_for(membership, skill, number)
    context = _version_context(request, membership, skill, version)
    return render_page(request, "skills/version.html", context, partial="matrix")


def _perform(
    action: str, *, membership: Membership, version: SkillVersion, actor: Actor, reason: str
) -> str:
    tenant = membership.tenant
    number = version.number
    if action == "submit":
        services.skill_version_submit(tenant=tenant, version=version, actor=actor)
        return f"Submitted v{number} for review."
    if action == "approve":
        version = services.skill_version_approve(
            tenant=tenant, version=version, actor=actor, reason=reason
        )
        if version.status == VersionStatus.IN_REVIEW:
            return f"Approved v{number}: 1 of 2 approvals; one more admin must approve it."
        return f"Approved v{number}. Publish it once all six evaluations pass."
    if action == "reject":
        services.skill_version_reject(tenant=tenant, version=version, actor=actor, reason=reason)
        return f"Rejected v{number}."
    if action == "publish":
        services.skill_version_publish(tenant=tenant, version=version, actor=actor, reason=reason)
        return f"Published v{number}; it is production now."
    if action == "deprecate":
        services.skill_version_deprecate(tenant=tenant, version=version, actor=actor, reason=reason)
        return f"Deprecated v{number}; loads of it now carry a warning."
    result = services.skill_version_revoke(
        tenant=tenant, version=version, actor=actor, reason=reason
    )
    message = (
        f"Revoked v{number}; every load of it is refused. "
        f"{result.instances_last_24h} instance(s) loaded it in the last 24 h."
    )
    if result.label_move is not None:
        to = result.label_move.to_version
        message += f" Production is now v{to.number}." if to else " No version is production now."
    return message


@login_required
@require_POST
def version_action(request: HttpRequest, slug: str, number: int, action: str) -> HttpResponse:
    if action not in ACTIONS.values():
        raise Http404("No such action.")
    membership = console_context(request, roles=[Role.ADMIN])
    skill = skill_for(membership, slug)
    version = version_for(membership, skill, number)
    form = ActionForm(request.POST, action=action, prefix=action)
    done = error = None
    status = 400
    if form.is_valid():
        try:
            done = _perform(
                action,
                membership=membership,
                version=version,
                actor=console_actor(request, membership),
                reason=form.cleaned_data["reason"],
            )
        except Problem as problem:
            error, status = str(problem.detail), problem.status_code
    else:
        error = "Check the form: a reason and the confirmation are required."
    skill = skill_for(membership, slug)
    version = version_for(membership, skill, number)
    context = _version_context(
        request, membership, skill, version, failed_form=None if done else form
    )
    return answer(
        request,
        template="skills/version.html",
        partial="state",
        context=context,
        done=done,
        error=error,
        status=status,
        redirect_to=reverse("skills:version", kwargs={"slug": slug, "number": number}),
    )


def _file(
    request: HttpRequest, slug: str, number: int, path: str
) -> tuple[Skill, SkillVersion, SkillFile]:
    membership = console_context(request, roles=CONSOLE_READERS)
    skill = skill_for(membership, slug)
    version = version_for(membership, skill, number)
    if selectors.content_withheld(version=version):
        raise Http404("A source memory of this draft was deleted; its files are withheld.")
    file = selectors.version_file_get(tenant=membership.tenant, version=version, path=path)
    if file is None:
        raise Http404("No such file.")
    return skill, version, file


@login_required
@require_GET
def file_detail(request: HttpRequest, slug: str, number: int, path: str) -> HttpResponse:
    """A file as escaped text inside the console page; bytes that are not UTF-8 are never shown.

    A package's files come from an agent: nothing in them is rendered as HTML,
    SVG or an image here. The raw bytes are only offered as an inert download.
    """
    skill, version, file = _file(request, slug, number, path)
    content = bytes(file.content)
    text = None
    if is_text(content):
        # The cut may split a character; the whole file was checked above.
        text = content[:FILE_PREVIEW_BYTES].decode("utf-8", errors="replace")
    context = {
        "skill": skill,
        "version": version,
        "file": file,
        "text": text,
        "truncated": text is not None and file.size > FILE_PREVIEW_BYTES,
    }
    return render_page(request, "skills/file.html", context, partial="content")


@login_required
@require_GET
def file_download(request: HttpRequest, slug: str, number: int, path: str) -> HttpResponse:
    """The raw bytes as an attachment that cannot run (see skills.inert)."""
    *_, file = _file(request, slug, number, path)
    return inert_file_response(path=file.path, content=bytes(file.content), sha256=file.sha256)
