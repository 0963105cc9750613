"""Console pages for skills: the list, a skill, a version, a diff and the label history.

Editors, admins and auditors read every page; only admins see and may post
the action forms (create, upload, submit, approve, reject, publish,
deprecate, revoke, roll back). The forms call the same services as the API,
so a rule enforced there (four eyes, the evaluation gate, required reasons)
holds here too. Action forms post with htmx and get the affected fragment
back; without JavaScript they post normally and redirect.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.access import CONSOLE_READERS, console_context
from accounts.actors import Actor
from accounts.models import Membership, Role
from common.htmx import is_htmx, render_page
from common.problems import Problem
from skills import selectors, services
from skills.forms import (
    CompareForm,
    DraftForm,
    RetireToolForm,
    RollbackForm,
    SkillCreateForm,
    UploadForm,
)
from skills.models import Skill, SkillVersion, VersionStatus
from skills.sidebyside import side_by_side

HISTORY_PAGE_SIZE = 20
PINS_SHOWN = 20
FILE_PREVIEW_BYTES = 200_000


# --- who is asking ----------------------------------------------------------------------------


def console_actor(request: HttpRequest, membership: Membership) -> Actor:
    return Actor.for_user(request.user, membership.role)


def skill_for(membership: Membership, slug: str) -> Skill:
    skill = selectors.skill_get(tenant=membership.tenant, slug=slug)
    if skill is None:
        raise Http404("No such skill.")
    return skill


def version_for(membership: Membership, skill: Skill, number: int) -> SkillVersion:
    version = selectors.skill_version_get(tenant=membership.tenant, skill=skill, number=number)
    if version is None:
        raise Http404("No such version.")
    return version


def answer(
    request: HttpRequest,
    *,
    template: str,
    partial: str,
    context: dict[str, Any],
    done: str | None,
    error: str | None,
    status: int,
    redirect_to: str,
) -> HttpResponse:
    """After an action: the fragment for htmx, else redirect (done) or the page again (error).

    htmx swaps only 2xx answers, so a refused action comes back as 200 with
    the error in the fragment; without htmx the page carries the real status.
    """
    if is_htmx(request):
        context.update(flash=done, flash_error=error)
        response = render(request, f"{template}#{partial}", context)
        if done is not None:
            # A label move or status change shows in several places of the page
            # (header chip, versions table, history): reload it whole, with the
            # message carried over, rather than leave parts of it stale.
            messages.success(request, done)
            response["HX-Refresh"] = "true"
        return response
    if done is not None:
        messages.success(request, done)
        return redirect(redirect_to)
    context.update(flash_error=error)
    return render(request, template, context, status=status)


# --- the list ---------------------------------------------------------------------------------


def _index_context(
    membership: Membership,
    form: SkillCreateForm | None = None,
    retire_form: RetireToolForm | None = None,
) -> dict[str, Any]:
    return {
        "retired_tools": list(selectors.retired_tools(tenant=membership.tenant)[:50]),
        "retire_form": retire_form or RetireToolForm(),
        "skills": list(selectors.skill_list(tenant=membership.tenant)),
        "is_admin": membership.role == Role.ADMIN,
        "may_draft": membership.role in (Role.ADMIN, Role.EDITOR),
        "create_form": form or SkillCreateForm(),
    }


@login_required
@require_http_methods(["GET", "POST"])
def index(request: HttpRequest) -> HttpResponse:
    """The skill list; admins create a skill by posting the form on it."""
    if request.method == "POST":
        return _create(request)
    membership = console_context(request, roles=CONSOLE_READERS)
    return render_page(request, "skills/index.html", _index_context(membership), partial="skills")


def _create(request: HttpRequest) -> HttpResponse:
    membership = console_context(request, roles=[Role.ADMIN])
    form = SkillCreateForm(request.POST)
    if form.is_valid():
        try:
            skill = services.skill_create(
                tenant=membership.tenant,
                slug=form.cleaned_data["slug"],
                name=form.cleaned_data["name"],
                actor=console_actor(request, membership),
            )
        except Problem as problem:
            form.add_error("slug", str(problem.detail))
        else:
            messages.success(request, f"Created {skill.slug}. Upload its first version below.")
            return redirect("skills:detail", slug=skill.slug)
    return render(request, "skills/index.html", _index_context(membership, form), status=400)


@login_required
@require_POST
def retire_tool(request: HttpRequest) -> HttpResponse:
    """Admins retire a tool agents no longer have; the versions needing it turn incompatible."""
    membership = console_context(request, roles=[Role.ADMIN])
    form = RetireToolForm(request.POST)
    if form.is_valid():
        try:
            result = services.tool_retire(
                tenant=membership.tenant,
                name=form.cleaned_data["name"],
                reason=form.cleaned_data["reason"],
                actor=console_actor(request, membership),
            )
        except Problem as problem:
            form.add_error("name", f"{problem.detail} ({problem.code})")
        else:
            moved = ", ".join(f"{v.skill.slug} v{v.number}" for v, _ in result.incompatible)
            messages.success(
                request,
                f"Retired {result.tool.name}. Incompatible now: {moved or 'no version'}.",
            )
            return redirect("skills:index")
    context = _index_context(membership, retire_form=form)
    return render(request, "skills/index.html", context, status=400)


# --- a skill ----------------------------------------------------------------------------------


def _history_page(
    membership: Membership, skill: Skill, *, before: int | None = None
) -> dict[str, Any]:
    moves = selectors.label_history(tenant=membership.tenant, skill=skill, label="production")
    if before is not None:
        moves = moves.filter(id__lt=before)
    page = list(moves[: HISTORY_PAGE_SIZE + 1])
    return {
        "moves": page[:HISTORY_PAGE_SIZE],
        "older": page[HISTORY_PAGE_SIZE - 1].pk if len(page) > HISTORY_PAGE_SIZE else None,
    }


def _production_number(skill: Skill) -> int | None:
    # `selectors.skill_list` annotates it; the model has no such column.
    number: int | None = getattr(skill, "production_number", None)
    return number


def _rollback_targets(membership: Membership, skill: Skill) -> list[int]:
    """Published versions other than production: where a rollback may point."""
    published = selectors.skill_versions(tenant=membership.tenant, skill=skill).filter(
        status=VersionStatus.PUBLISHED
    )
    production = _production_number(skill)
    if production is not None:
        published = published.exclude(number=production)
    return list(published.order_by("-number").values_list("number", flat=True))


def _skill_context(
    membership: Membership,
    skill: Skill,
    *,
    upload_form: UploadForm | None = None,
    rollback_form: RollbackForm | None = None,
) -> dict[str, Any]:
    tenant = membership.tenant
    versions = list(selectors.skill_versions(tenant=tenant, skill=skill).order_by("-number"))
    pins = selectors.pins_recent_by_version(tenant=tenant, skill=skill)
    for version in versions:
        version.instances_last_24h = pins.get(version.pk, 0)
    production = next((v for v in versions if v.number == _production_number(skill)), None)
    targets = _rollback_targets(membership, skill)
    newest = versions[0].number if versions else None
    compare_from = production.number if production is not None else None
    if compare_from is None or compare_from == newest:
        compare_from = versions[1].number if len(versions) > 1 else None
    return {
        "skill": skill,
        "versions": versions,
        "production": production,
        "is_admin": membership.role == Role.ADMIN,
        "rollback_targets": targets,
        # After a rollback the newer version is a target again: moving to it is no rollback.
        "rollback_verb": (
            "Roll back"
            if production is not None and all(n < production.number for n in targets)
            else "Move production"
        ),
        "rollback_form": rollback_form or RollbackForm(targets=targets),
        "upload_form": upload_form or UploadForm(),
        "compare_form": CompareForm(initial={"a": compare_from, "b": newest}),
        **_history_page(membership, skill),
    }


@login_required
@require_GET
def detail(request: HttpRequest, slug: str) -> HttpResponse:
    membership = console_context(request, roles=CONSOLE_READERS)
    skill = skill_for(membership, slug)
    return render_page(request, "skills/skill.html", _skill_context(membership, skill))


@login_required
@require_POST
def upload(request: HttpRequest, slug: str) -> HttpResponse:
    membership = console_context(request, roles=[Role.ADMIN])
    skill = skill_for(membership, slug)
    form = UploadForm(request.POST, request.FILES)
    if form.is_valid():
        package = form.cleaned_data["package"]
        try:
            if package.size > services.upload_max_bytes():
                raise Problem(
                    "package_too_large",
                    f"The upload is {package.size} bytes; the limit is "
                    f"{services.upload_max_bytes()}.",
                )
            version, created = services.skill_version_upload(
                tenant=membership.tenant,
                skill=skill,
                data=package.read(),
                actor=console_actor(request, membership),
            )
        except Problem as problem:
            form.add_error("package", f"{problem.detail} ({problem.code})")
        else:
            if created:
                messages.success(request, f"Uploaded v{version.number} as a draft.")
            else:
                messages.info(
                    request,
                    f"This content is already v{version.number}; nothing new was stored.",
                )
            return redirect("skills:version", slug=skill.slug, number=version.number)
    context = _skill_context(membership, skill, upload_form=form)
    return render(request, "skills/skill.html", context, status=400)


@login_required
@require_POST
def rollback(request: HttpRequest, slug: str) -> HttpResponse:
    membership = console_context(request, roles=[Role.ADMIN])
    skill = skill_for(membership, slug)
    form = RollbackForm(request.POST, targets=_rollback_targets(membership, skill))
    done = error = None
    status = 400
    if form.is_valid():
        try:
            move = services.skill_rollback(
                tenant=membership.tenant,
                skill=skill,
                to_number=form.cleaned_data["to"],
                actor=console_actor(request, membership),
                reason=form.cleaned_data["reason"],
            )
        except Problem as problem:
            error, status = str(problem.detail), problem.status_code
        else:
            previous = f"v{move.from_version.number}" if move.from_version else "nothing"
            target = f"v{move.to_version.number}" if move.to_version else "nothing"
            done = f"Production moved from {previous} to {target}."
    else:
        error = "Check the form below."
    skill = skill_for(membership, slug)
    context = _skill_context(membership, skill, rollback_form=None if done else form)
    return answer(
        request,
        template="skills/skill.html",
        partial="production",
        context=context,
        done=done,
        error=error,
        status=status,
        redirect_to=reverse("skills:detail", kwargs={"slug": slug}),
    )


@login_required
@require_GET
def history(request: HttpRequest, slug: str) -> HttpResponse:
    membership = console_context(request, roles=CONSOLE_READERS)
    skill = skill_for(membership, slug)
    try:
        before = int(request.GET["before"]) if request.GET.get("before") else None
    except ValueError as exc:
        raise Http404("Bad page.") from exc
    context = {"skill": skill, **_history_page(membership, skill, before=before)}
    return render_page(request, "skills/history.html", context, partial="moves")


# --- a version --------------------------------------------------------------------------------


# --- diff -------------------------------------------------------------------------------------


@login_required
@require_GET
def diff(request: HttpRequest, slug: str) -> HttpResponse:
    membership = console_context(request, roles=CONSOLE_READERS)
    skill = skill_for(membership, slug)
    form = CompareForm(request.GET)
    context: dict[str, Any] = {"skill": skill, "compare_form": form, "diff": None}
    if not form.is_valid():
        return render_page(request, "skills/diff.html", context, partial="diff", status=400)
    old = version_for(membership, skill, form.cleaned_data["a"])
    new = version_for(membership, skill, form.cleaned_data["b"])
    result = selectors.version_diff(tenant=membership.tenant, old=old, new=new)
    context["diff"] = result
    context["file_diffs"] = [
        {
            **change,
            "rows": side_by_side(
                result.old_texts.get(change["path"]), result.new_texts.get(change["path"])
            ),
        }
        for change in result.files
    ]
    return render_page(request, "skills/diff.html", context, partial="diff")


# --- drafts from experience -------------------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def draft_new(request: HttpRequest) -> HttpResponse:
    """Editors pick successful experiences; memdesk drafts a SKILL.md package from them."""
    membership = console_context(request, roles=[Role.EDITOR])
    candidates = selectors.draft_candidates(tenant=membership.tenant)
    choices = [(str(claim.pk), claim.text or claim.predicate) for claim in candidates]
    form = DraftForm(request.POST or None, choices=choices)
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                result = services.skill_draft_from_experiences(
                    tenant=membership.tenant,
                    actor=console_actor(request, membership),
                    slug=form.cleaned_data["slug"],
                    name=form.cleaned_data["name"],
                    description=form.cleaned_data["description"],
                    claim_ids=form.cleaned_data["claims"],
                )
            except Problem as problem:
                form.add_error(None, f"{problem.detail} ({problem.code})")
            else:
                number = result.version.number
                if result.created:
                    messages.success(
                        request,
                        f"Drafted v{number} from {len(result.claim_ids)} runs. Review it, "
                        "then submit it for evaluation and approval.",
                    )
                else:
                    messages.info(request, f"These runs already drafted v{number}.")
                return redirect("skills:version", slug=result.version.skill.slug, number=number)
    context = {"form": form, "candidates": candidates}
    return render(request, "skills/draft_new.html", context, status=status)
