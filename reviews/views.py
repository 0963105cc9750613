"""Console review queues: list, open (claim), decide, bulk approve, undo."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from accounts.access import CONSOLE_READERS, console_context
from accounts.actors import Actor
from accounts.models import Membership
from common import parsers
from common.htmx import is_htmx, render_page
from common.problems import Problem
from reviews import selectors, services
from reviews.context_processors import remember_queue_depths, request_queue_depths
from reviews.filters import AGE_CHOICES, ReviewItemFilter
from reviews.models import OPEN_STATUSES, Decision, ItemStatus, Queue, ReviewItem
from reviews.registry import QueuePolicy, policy_for

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
    Queue.APPROVALS: "Side effects held for another person's approval: read the intent, decide.",
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
    request: HttpRequest,
    membership: Membership,
    queue: str,
    selected: ReviewItem | None,
    *,
    query: QueryDict | None = None,
) -> dict[str, Any]:
    """The list (filtered and sorted by `query`, the page's own query string) and the
    detail pane of `selected`."""
    query = request.GET if query is None else query
    sort = _sort(query)
    # Most page loads filter nothing: the FilterSet (its filters deep-copied, its form
    # built and cleaned) only when the query names a filter.
    filterset = (
        ReviewItemFilter(query, queryset=selectors.review_items(tenant=membership.tenant))
        if any(query.get(name) for name in ReviewItemFilter.base_filters)
        else None
    )
    filtered = (
        filterset is not None
        and filterset.is_valid()
        and any(v not in (None, "") for v in filterset.form.cleaned_data.values())
    )
    if filterset is not None and filtered:
        page = selectors.queue_page(
            tenant=membership.tenant,
            queue=queue,
            filtered=filterset.qs,
            sort=sort,
            after=query.get("after"),
            limit=PAGE_SIZE,
        )
        saved_filters = selectors.saved_filters(
            tenant=membership.tenant, owner=request.user, queue=queue
        )
        undo_offer = _undo_offer(request, membership, queue)
    else:
        # Most page loads: the badges, the page, the saved filters and whether an undo is
        # to be offered, read in one round trip.
        reads = selectors.queue_workspace(
            tenant=membership.tenant,
            owner=request.user,
            queue=queue,
            sort=sort,
            after=query.get("after"),
            limit=PAGE_SIZE,
        )
        remember_queue_depths(request, reads.depths)
        page, saved_filters = reads.page, reads.saved_filters
        undo_offer = _undo_offer(
            request, membership, queue, decisions=None if reads.decided_recently else []
        )
    policy = policy_for(queue)
    rows = policy.presenter.rows(items=page.items) if policy and policy.presenter else {}
    kept = query.copy()
    kept.pop("after", None)
    kept.pop("item", None)
    return {
        # Reversed once per page: rows link to `<queue_url>?item=<id>` and
        # `<queue_url><id>/` (reviews:item) instead of reversing per row.
        "queue_url": reverse("reviews:queue", args=[queue]),
        "queue_label": Queue(queue).label,
        "queue_help": QUEUE_HELP[Queue(queue)],
        "page": page,
        "rows": [(item, rows.get(item.pk, {})) for item in page.items],
        # None renders as empty fields.
        "filter_form": filterset.form if filterset is not None else None,
        "filter_query": kept.urlencode(),
        "filtered": filtered,
        "sort": sort,
        "sort_choices": selectors.SORT_CHOICES,
        "age_choices": AGE_CHOICES,
        "saved_filters": saved_filters,
        "undo_offer": undo_offer,
        **_detail_context(request, membership, queue, selected, query=kept.urlencode()),
    }


def _undo_offer(
    request: HttpRequest,
    membership: Membership,
    queue: str,
    decisions: list[Decision] | None = None,
) -> dict[str, Any] | None:
    """The toast offering to take back the person's latest decision (or a bulk approval's
    decisions) while their window lasts; the server decides, the countdown only shows it."""
    policy = policy_for(queue)
    if policy is None or membership.role not in policy.roles:
        return None
    if decisions is None:
        decisions = selectors.undoable_decisions(
            tenant=membership.tenant, actor_id=str(request.user.pk), queue=queue
        )
    if not decisions:
        return None
    until = min(selectors.undo_deadline(decision=d) for d in decisions)
    if len(decisions) == 1:
        sentence = _outcome(policy, decisions[0].item, decisions[0])
    else:
        sentence = f"{policy.label(decisions[0].verdict)}: {len(decisions)} items."
    return {
        "sentence": sentence,
        "decisions": [d.pk for d in decisions],
        "until": until,
        "seconds_left": max(0, int((until - timezone.now()).total_seconds())),
        "url": reverse("reviews:undo", args=[queue]),
    }


def _sort(query: QueryDict) -> str:
    sort = query.get("sort", "age")
    return sort if sort in selectors.SORTS else "age"


def _detail_context(
    request: HttpRequest,
    membership: Membership,
    queue: str,
    item: ReviewItem | None,
    *,
    query: str = "",
) -> dict[str, Any]:
    policy = policy_for(queue)
    may_decide = membership.role in (policy.roles if policy else ())
    context: dict[str, Any] = {
        "queue": queue,
        "policy": policy,
        "reason_codes": policy.reasons if policy else (),
        "verdicts": policy.verdict_choices() if policy else [],
        "can_decide": may_decide,
        "read_only_reason": _read_only_reason(membership, policy),
        "return_query": query,
        "item": item,
    }
    if item is None:
        return context
    template, extra = (
        policy.presenter.detail(item=item)
        if policy and policy.presenter
        else ("reviews/detail_generic.html", {})
    )
    holder = _holder_other_than(item, request.user)
    return {
        **context,
        "detail_template": template,
        "closed": item.status not in OPEN_STATUSES,
        "decisions": list(item.decisions.order_by("at")),
        "held_by": holder,
        # Someone else's live lease: the actions are shown, disabled, with the holder's name.
        "actions_disabled": holder is not None,
        **extra,
    }


def _holder_other_than(item: ReviewItem, user: Any) -> str | None:
    if (
        item.status == ItemStatus.CLAIMED
        and item.lease_expires_at is not None
        and item.lease_expires_at > timezone.now()
        and item.claimed_by_id != user.pk
    ):
        return str(item.claimed_by)
    return None


def _read_only_reason(membership: Membership, policy: QueuePolicy | None) -> str:
    if policy is None or membership.role in policy.roles:
        return ""
    if membership.role == "auditor":
        return "You are signed in as an auditor: you can read every queue, but not decide."
    roles = " or ".join(policy.roles)
    return f"Only an {roles} decides items in this queue; you can read them."


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
        context = _detail_context(request, membership, queue, item, query=_return_query(request))
        return render_page(request, "reviews/queue.html", context, partial="detail")
    return render_page(request, "reviews/queue.html", _workspace(request, membership, queue, item))


def _posted_query(request: HttpRequest) -> QueryDict:
    """The list's filters and sort when a form was posted: the page's address as it is now
    (htmx sends it; filters change it without reloading), else the form's copy."""
    raw = _return_query(request) if is_htmx(request) else request.POST.get("return_query", "")
    return QueryDict(raw, mutable=True)


def _return_query(request: HttpRequest) -> str:
    """The queue page's filters and sort, carried by the htmx request that opened an item."""
    current = request.headers.get("HX-Current-URL", "")
    query = QueryDict(current.split("?", 1)[1] if "?" in current else "", mutable=True)
    query.pop("item", None)
    query.pop("after", None)
    return query.urlencode()


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
    context = {
        "item": item,
        "claim_error": error,
        "held_by": _holder_other_than(item, request.user),
    }
    if is_htmx(request):
        return render_page(request, "reviews/queue.html", context, partial="claim_status")
    if error:
        messages.error(request, error)
    return redirect(f"{reverse('reviews:queue', args=[queue])}?item={item.pk}")


def _payload(request: HttpRequest, policy: QueuePolicy | None) -> dict[str, Any]:
    """The decision form's fields the queue's payload serializer declares; the
    serializer (in review_decide) judges them, as it judges the API's body."""
    if policy is None:
        return {}
    payload: dict[str, Any] = {}
    names: list[str] = list(policy.payload().fields)
    for name in names:
        if name == "scopes":
            scopes = _scopes(request)
            if scopes:
                payload["scopes"] = scopes
        elif name == "evidence":
            if request.POST.get("evidence", "").strip():
                payload["evidence"] = {"note": request.POST["evidence"].strip()}
        elif request.POST.get(name, "").strip():
            payload[name] = request.POST[name].strip()
    if request.POST.get("payload_json"):
        payload.update(_payload_json(request.POST["payload_json"]))
    return payload


def _scopes(request: HttpRequest) -> dict[str, dict[str, str]]:
    scopes: dict[str, dict[str, str]] = {}
    for key in request.POST:
        value = request.POST[key]
        # keep_both: scope_<claim id> = "project=crm, env=prod"
        if key.startswith("scope_") and value.strip():
            pairs = [p.split("=", 1) for p in value.split(",") if "=" in p]
            scopes[key.removeprefix("scope_")] = {k.strip(): v.strip() for k, v in pairs}
    return scopes


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
    policy = policy_for(queue)
    try:
        decision = services.review_decide(
            tenant=membership.tenant,
            item_id=item.pk,
            actor=actor,
            verdict=verdict,
            reason_code=request.POST.get("reason_code", ""),
            note=request.POST.get("note", ""),
            payload=_payload(request, policy),
        )
    except Problem as problem:
        return _refused(request, membership, queue, item, problem)
    if not decision.undo_state:
        # An undoable decision is told by the undo toast, with its button.
        messages.success(request, _outcome(policy, item, decision))
    # The next item is the first of the list the editor was looking at: same filters, same sort.
    query = _posted_query(request)
    next_item = _next_item(membership, queue, query, after=item)
    shown = query.copy()
    shown.setlist("item", [str(next_item.pk)] if next_item is not None else [])
    encoded = shown.urlencode()
    url = reverse("reviews:queue", args=[queue]) + (f"?{encoded}" if encoded else "")
    if is_htmx(request):
        context = _workspace(request, membership, queue, next_item, query=query)
        response = render_page(request, "reviews/queue.html", context, partial="workspace")
        # The address names the item shown: a reload never opens the one just decided.
        response["HX-Push-Url"] = url
        return response
    return redirect(url)


def _outcome(policy: QueuePolicy | None, item: ReviewItem, decision: Decision) -> str:
    """What the decision did, in one sentence: the presenter's if it has one."""
    describe = getattr(policy.presenter, "outcome", None) if policy else None
    if describe is not None:
        sentence = describe(item=item, decision=decision)
        if sentence:
            return str(sentence)
    label = policy.label(decision.verdict) if policy else decision.verdict
    return f"#{item.pk}: {label} — done."


def _refused(
    request: HttpRequest, membership: Membership, queue: str, item: ReviewItem, problem: Problem
) -> HttpResponse:
    item.refresh_from_db()
    advice = {
        "target_changed": "Reload the item to see what changed, then decide again.",
        "item_claimed": "Pick another item; this one is held by a colleague.",
        "reason_required": "Choose a reason and submit again.",
        "note_required": "Add a note explaining the reason.",
    }.get(problem.code, "")
    if is_htmx(request):
        context = {
            **_detail_context(
                request, membership, queue, item, query=_posted_query(request).urlencode()
            ),
            "decision_error": f"{problem.detail} {advice}".strip(),
            "error_code": problem.code,
            "field_errors": problem.errors or {},
            "posted": request.POST,
        }
        response = render_page(request, "reviews/queue.html", context, partial="detail")
        response.status_code = 200 if problem.status_code < 500 else 500
        response["HX-Retarget"] = "#detail"
        response["HX-Reswap"] = "outerHTML"
        return response
    messages.error(request, f"{problem.detail} {advice}".strip())
    return redirect(f"{reverse('reviews:queue', args=[queue])}?item={item.pk}")


def _next_item(
    membership: Membership, queue: str, query: QueryDict, *, after: ReviewItem
) -> ReviewItem | None:
    items = selectors.review_items(tenant=membership.tenant)
    filterset = ReviewItemFilter(query, queryset=items)
    page = selectors.queue_page(
        tenant=membership.tenant,
        queue=queue,
        filtered=filterset.qs if filterset.is_valid() else items,
        sort=_sort(query),
        after=None,
        limit=2,
        depth=0,
    )
    return next((candidate for candidate in page.items if candidate.pk != after.pk), None)


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
    decided: list[Decision] = []
    for raw in request.POST.getlist("items"):
        try:
            decision = services.review_decide(
                tenant=membership.tenant,
                item_id=int(raw),
                actor=actor,
                verdict=policy.approve_verdict,
                reason_code=request.POST.get("reason_code", ""),
                note=request.POST.get("note", ""),
            )
            decided.append(decision)
            done += 1
        except (Problem, ValueError) as problem:
            refused.append(f"#{raw}: {getattr(problem, 'detail', problem)}")
    if done:
        messages.success(request, f"Approved {done} item{'s' if done != 1 else ''}.")
    if refused:
        messages.error(request, "Not approved: " + "; ".join(refused))
    if not done and not refused:
        messages.error(request, "Select at least one item to approve: tick its box in the list.")
    query = _posted_query(request)
    # The item open beside the list stays open unless it was just approved.
    still_open = _open_item(membership, queue, request.POST.get("open_item", ""))
    if is_htmx(request):
        context = _workspace(request, membership, queue, still_open, query=query)
        # One undo for the whole batch.
        undoable = [d.pk for d in decided if d.undo_state]
        if len(undoable) > 1:
            context["undo_offer"] = _undo_offer(
                request,
                membership,
                queue,
                selectors.undoable_decisions(
                    tenant=membership.tenant,
                    actor_id=str(request.user.pk),
                    queue=queue,
                    ids=undoable,
                ),
            )
        return render_page(request, "reviews/queue.html", context, partial="workspace")
    if still_open is not None:
        query["item"] = str(still_open.pk)
    suffix = f"?{query.urlencode()}" if query else ""
    return redirect(reverse("reviews:queue", args=[queue]) + suffix)


@login_required
@require_POST
def undo_view(request: HttpRequest, queue: str) -> HttpResponse:
    """Take back the decisions named by `decision` (one, or a bulk approval's); the first
    item taken back opens beside the list, held by this person, to be decided again."""
    membership = console_context(request, roles=CONSOLE_READERS)
    queue = _queue(queue)
    actor = Actor.for_user(request.user, membership.role)
    reopened: list[ReviewItem] = []
    refused: list[str] = []
    for raw in request.POST.getlist("decision"):
        try:
            undo = services.review_undo(
                tenant=membership.tenant, decision_id=int(raw), actor=actor, user=request.user
            )
        except ValueError as bad:
            raise Http404("no such decision") from bad
        except Problem as problem:
            if problem.status_code == 404:
                raise Http404(str(problem.detail)) from problem
            refused.append(str(problem.detail))
            continue
        reopened.append(undo.decision.item)
    if reopened:
        names = ", ".join(f"#{item.pk}" for item in reopened)
        messages.success(request, f"Undone: {names} is open again for you to decide.")
    if refused:
        messages.error(request, "Not undone: " + " ".join(dict.fromkeys(refused)))
    if not reopened and not refused:
        messages.error(request, "Nothing to undo was named.")
    query = _posted_query(request)
    selected = reopened[0] if reopened else None
    if is_htmx(request):
        context = _workspace(request, membership, queue, selected, query=query)
        return render_page(request, "reviews/queue.html", context, partial="workspace")
    if selected is not None:
        query["item"] = str(selected.pk)
    suffix = f"?{query.urlencode()}" if query else ""
    return redirect(reverse("reviews:queue", args=[queue]) + suffix)


def _open_item(membership: Membership, queue: str, raw: str) -> ReviewItem | None:
    try:
        item = _item(membership, queue, int(raw))
    except (ValueError, Http404):
        return None
    return item if item.status in OPEN_STATUSES else None


@login_required
@require_POST
def filter_save(request: HttpRequest, queue: str) -> HttpResponse:
    """Save the queue page's current filters and sort under a name, for this person."""
    membership = console_context(request, roles=CONSOLE_READERS)
    queue = _queue(queue)
    query = QueryDict(request.POST.get("query", ""), mutable=True)
    try:
        saved = services.saved_filter_save(
            tenant=membership.tenant,
            owner=request.user,
            queue=queue,
            name=request.POST.get("name", ""),
            query=query,
        )
    except Problem as problem:
        messages.error(request, str(problem.detail))
        suffix = f"?{query.urlencode()}" if query else ""
        return redirect(reverse("reviews:queue", args=[queue]) + suffix)
    messages.success(request, f"Saved “{saved.name}”. Its link opens the queue this way.")
    suffix = f"?{saved.query}" if saved.query else ""
    return redirect(reverse("reviews:queue", args=[queue]) + suffix)


@login_required
@require_POST
def filter_delete(request: HttpRequest, queue: str, filter_id: int) -> HttpResponse:
    membership = console_context(request, roles=CONSOLE_READERS)
    queue = _queue(queue)
    try:
        services.saved_filter_delete(
            tenant=membership.tenant, owner=request.user, filter_id=filter_id
        )
    except Problem as problem:
        raise Http404(str(problem.detail)) from problem
    messages.success(request, "Saved filter removed.")
    return redirect("reviews:queue", queue=queue)
