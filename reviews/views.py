"""Console review queues: list, open (claim), decide, bulk approve."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from accounts.access import CONSOLE_READERS, console_context
from accounts.actors import Actor
from accounts.models import Membership
from common import parsers
from common.htmx import is_htmx, render_page
from common.problems import Problem
from reviews import selectors, services
from reviews.context_processors import request_queue_depths
from reviews.filters import ReviewItemFilter
from reviews.models import OPEN_STATUSES, Queue, ReasonCode, ReviewItem
from reviews.registry import policy_for

PAGE_SIZE = 50
QUEUE_HELP = {
    Queue.CANDIDATES: "Memories the write gate would not accept on its own: inferences, "
    "reports and anything that looked like an instruction.",
    Queue.CONFLICTS: "Two active claims disagree about the same thing and nothing could "
    "settle it by authority or observation time.",
    Queue.MANUAL_REVIEW: "Side effects whose outcome reconciliation could not prove. Check the "
    "outside system, then record what happened.",
    Queue.SKILL_PUBLICATION: "Skill versions submitted for approval. Someone other than the "
    "author approves.",
    Queue.DELETIONS: "Deletions that failed or whose verification found something left.",
    Queue.STALE: "Claims past their refresh date that agents keep asking for.",
}


def _queue(queue: str) -> str:
    if queue not in Queue.values:
        raise Http404("no such queue")
    return queue


def _item(membership: Membership, queue: str, item_id: int) -> ReviewItem:
    item = selectors.review_item_get(tenant=membership.tenant, item_id=item_id)
    if item is None or item.queue != queue:
        raise Http404("no such review item")
    return item


def _workspace(
    request: HttpRequest, membership: Membership, queue: str, selected: ReviewItem | None
) -> dict[str, Any]:
    items = selectors.review_items(tenant=membership.tenant)
    filterset = ReviewItemFilter(request.GET, queryset=items)
    sort = request.GET.get("sort", "age")
    if sort not in selectors.SORTS:
        sort = "age"
    valid = filterset.is_valid()
    filtered = valid and any(v not in (None, "") for v in filterset.form.cleaned_data.values())
    page = selectors.queue_page(
        tenant=membership.tenant,
        queue=queue,
        filtered=filterset.qs if valid else items,
        sort=sort,
        after=request.GET.get("after"),
        limit=PAGE_SIZE,
        # Unfiltered, the page counts what its badge counts: read both at once.
        depth=None
        if filtered
        else request_queue_depths(request, tenant=membership.tenant).get(queue, 0),
    )
    policy = policy_for(queue)
    rows = policy.presenter.rows(items=page.items) if policy and policy.presenter else {}
    query = request.GET.copy()
    query.pop("after", None)
    query.pop("item", None)
    return {
        "queue": queue,
        # Reversed once per page: rows link to `<queue_url>?item=<id>` and
        # `<queue_url><id>/` (reviews:item) instead of reversing per row.
        "queue_url": reverse("reviews:queue", args=[queue]),
        "queue_label": Queue(queue).label,
        "queue_help": QUEUE_HELP[Queue(queue)],
        "page": page,
        "rows": [(item, rows.get(item.pk, {})) for item in page.items],
        "filter_form": filterset.form,
        "filter_query": query.urlencode(),
        "sort": sort,
        "sort_choices": selectors.SORT_CHOICES,
        "policy": policy,
        "reason_codes": ReasonCode.choices,
        "can_decide": membership.role in (policy.roles if policy else ()),
        **_detail_context(membership, selected),
    }


def _detail_context(membership: Membership, item: ReviewItem | None) -> dict[str, Any]:
    if item is None:
        return {"item": None}
    policy = policy_for(item.queue)
    template, context = (
        policy.presenter.detail(item=item)
        if policy and policy.presenter
        else ("reviews/detail_generic.html", {})
    )
    return {
        "item": item,
        "detail_template": template,
        "closed": item.status not in OPEN_STATUSES,
        "decisions": list(item.decisions.order_by("at")),
        **context,
    }


@login_required
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    membership = console_context(request, roles=CONSOLE_READERS)
    depths = request_queue_depths(request, tenant=membership.tenant)
    busiest = max(depths, key=lambda q: depths[q], default=Queue.CANDIDATES)
    return redirect("reviews:queue", queue=busiest)


@login_required
@require_GET
def queue_view(request: HttpRequest, queue: str) -> HttpResponse:
    membership = console_context(request, roles=CONSOLE_READERS)
    queue = _queue(queue)
    selected = None
    if request.GET.get("item"):
        try:
            selected = _item(membership, queue, int(request.GET["item"]))
        except (ValueError, Http404):
            selected = None
    context = _workspace(request, membership, queue, selected)
    return render_page(request, "reviews/queue.html", context, partial="list")


@login_required
@require_GET
def item_view(request: HttpRequest, queue: str, item_id: int) -> HttpResponse:
    membership = console_context(request, roles=CONSOLE_READERS)
    item = _item(membership, _queue(queue), item_id)
    if is_htmx(request):
        policy = policy_for(queue)
        context = {
            "queue": queue,
            "policy": policy,
            "reason_codes": ReasonCode.choices,
            "can_decide": membership.role in (policy.roles if policy else ()),
            **_detail_context(membership, item),
        }
        return render_page(request, "reviews/queue.html", context, partial="detail")
    return render_page(request, "reviews/queue.html", _workspace(request, membership, queue, item))


@login_required
@require_POST
def claim_view(request: HttpRequest, queue: str, item_id: int) -> HttpResponse:
    membership = console_context(request, roles=CONSOLE_READERS)
    item = _item(membership, _queue(queue), item_id)
    actor = Actor.for_user(request.user, membership.role)
    error = None
    try:
        item = services.review_claim(
            tenant=membership.tenant, item_id=item.pk, actor=actor, user=request.user
        )
    except Problem as problem:
        if problem.code == "role_required":
            raise PermissionDenied(str(problem.detail)) from problem
        error = str(problem.detail)
        item.refresh_from_db()
    context = {"item": item, "claim_error": error}
    if is_htmx(request):
        return render_page(request, "reviews/queue.html", context, partial="claim_status")
    if error:
        messages.error(request, error)
    return redirect(f"{reverse('reviews:queue', args=[queue])}?item={item.pk}")


def _payload(request: HttpRequest) -> dict[str, Any]:
    payload: dict[str, Any] = {}
    for field in ("winner", "loser", "external_id", "into"):
        if request.POST.get(field):
            payload[field] = request.POST[field].strip()
    scopes: dict[str, dict[str, str]] = {}
    for key in request.POST:
        value = request.POST[key]
        # keep_both: scope_<claim id> = "project=crm, env=prod"
        if key.startswith("scope_") and value.strip():
            pairs = [p.split("=", 1) for p in value.split(",") if "=" in p]
            scopes[key.removeprefix("scope_")] = {k.strip(): v.strip() for k, v in pairs}
    if scopes:
        payload["scopes"] = scopes
    if request.POST.get("evidence"):
        payload["evidence"] = {"note": request.POST["evidence"].strip()}
    if request.POST.get("payload_json"):
        payload.update(_payload_json(request.POST["payload_json"]))
    return payload


def _payload_json(raw: str) -> dict[str, Any]:
    # The same refusals as the API's JSON (NUL, lone surrogates, depth, 64-bit
    # integers), and the decision handlers need named fields, so an object.
    try:
        value = parsers.loads(raw)
    except Problem as problem:
        raise Problem(
            "payload_invalid", f"The decision payload is not usable JSON: {problem.detail}"
        ) from problem
    if not isinstance(value, dict):
        raise Problem(
            "payload_invalid",
            'The decision payload must be a JSON object, like {"winner": "<claim id>"}.',
        )
    return value


@login_required
@require_POST
def decide_view(request: HttpRequest, queue: str, item_id: int) -> HttpResponse:
    membership = console_context(request, roles=CONSOLE_READERS)
    queue = _queue(queue)
    item = _item(membership, queue, item_id)
    actor = Actor.for_user(request.user, membership.role)
    verdict = request.POST.get("verdict", "")
    try:
        services.review_decide(
            tenant=membership.tenant,
            item_id=item.pk,
            actor=actor,
            verdict=verdict,
            reason_code=request.POST.get("reason_code", ""),
            note=request.POST.get("note", ""),
            payload=_payload(request),
        )
    except Problem as problem:
        return _refused(request, membership, queue, item, problem)
    messages.success(request, f"{verdict.replace('_', ' ').capitalize()}: done.")
    next_item = _next_item(membership, queue, after=item)
    if is_htmx(request):
        context = _workspace(request, membership, queue, next_item)
        return render_page(request, "reviews/queue.html", context, partial="workspace")
    suffix = f"?item={next_item.pk}" if next_item else ""
    return redirect(reverse("reviews:queue", args=[queue]) + suffix)


def _refused(
    request: HttpRequest, membership: Membership, queue: str, item: ReviewItem, problem: Problem
) -> HttpResponse:
    item.refresh_from_db()
    advice = {
        "target_changed": "Reload the item to see what changed, then decide again.",
        "item_claimed": "Pick another item; this one is held by a colleague.",
        "reason_required": "Choose a reason code and submit again.",
        "note_required": "Add a note explaining the reason.",
    }.get(problem.code, "")
    if is_htmx(request):
        policy = policy_for(queue)
        context = {
            "queue": queue,
            "policy": policy,
            "reason_codes": ReasonCode.choices,
            "can_decide": membership.role in (policy.roles if policy else ()),
            "decision_error": f"{problem.detail} {advice}".strip(),
            "error_code": problem.code,
            "posted": request.POST,
            **_detail_context(membership, item),
        }
        response = render_page(request, "reviews/queue.html", context, partial="detail")
        response.status_code = 200 if problem.status_code < 500 else 500
        response["HX-Retarget"] = "#detail"
        return response
    messages.error(request, f"{problem.detail} {advice}".strip())
    return redirect(f"{reverse('reviews:queue', args=[queue])}?item={item.pk}")


def _next_item(membership: Membership, queue: str, *, after: ReviewItem) -> ReviewItem | None:
    return (
        ReviewItem.objects.filter(tenant=membership.tenant, queue=queue, status__in=OPEN_STATUSES)
        .exclude(pk=after.pk)
        .order_by("created_at", "id")
        .first()
    )


@login_required
@require_POST
def bulk_view(request: HttpRequest, queue: str) -> HttpResponse:
    membership = console_context(request, roles=CONSOLE_READERS)
    queue = _queue(queue)
    policy = policy_for(queue)
    if policy is None or policy.approve_verdict is None:
        raise Http404("this queue has no bulk approval")
    actor = Actor.for_user(request.user, membership.role)
    done, refused = 0, []
    for raw in request.POST.getlist("items"):
        try:
            services.review_decide(
                tenant=membership.tenant,
                item_id=int(raw),
                actor=actor,
                verdict=policy.approve_verdict,
                reason_code=request.POST.get("reason_code", ""),
                note=request.POST.get("note", ""),
            )
            done += 1
        except (Problem, ValueError) as problem:
            refused.append(f"#{raw}: {getattr(problem, 'detail', problem)}")
    if done:
        messages.success(request, f"Approved {done} item{'s' if done != 1 else ''}.")
    if refused:
        messages.error(request, "Not approved: " + "; ".join(refused))
    if not done and not refused:
        messages.error(request, "Select at least one item to approve.")
    if is_htmx(request):
        context = _workspace(request, membership, queue, None)
        return render_page(request, "reviews/queue.html", context, partial="workspace")
    return redirect("reviews:queue", queue=queue)
