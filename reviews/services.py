"""Every write to review items: open, claim, release, decide, undo, cancel."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.http import QueryDict
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import ActorKind, Tenant
from accounts.services import audit_record
from common.problems import Problem, not_found
from common.transitions import Moves, move_many, move_row
from reviews.filters import ReviewItemFilter
from reviews.models import (
    ITEM_UNDO_ROLE,
    OPEN_STATUSES,
    REVIEW_ITEM_MACHINE,
    Decision,
    DecisionUndo,
    ItemStatus,
    Queue,
    ReviewItem,
    SavedFilter,
)
from reviews.registry import OTHER_REASON, DecisionInput, QueuePolicy, UndoInput, policy_for
from reviews.selectors import SORTS, undo_deadline


def review_open(
    *,
    tenant: Tenant,
    queue: str,
    target_type: str,
    target_id: Any,
    target_version: str = "",
    priority: int = 0,
    subject_key: str = "",
    topic: str = "",
    agent_label: str = "",
    reason_codes: list[str] | None = None,
) -> ReviewItem:
    """Open an item for a target, or return the one already open for it in that queue."""
    existing = ReviewItem.objects.filter(
        tenant=tenant,
        queue=queue,
        target_type=target_type,
        target_id=str(target_id),
        status__in=OPEN_STATUSES,
    ).first()
    if existing is not None:
        return existing
    try:
        with transaction.atomic():
            return ReviewItem.objects.create(
                tenant=tenant,
                queue=queue,
                target_type=target_type,
                target_id=str(target_id),
                target_version=target_version,
                priority=priority,
                subject_key=subject_key,
                topic=topic[:200],
                agent_label=agent_label,
                reason_codes=reason_codes or [],
            )
    except IntegrityError:
        # A concurrent writer opened it first; the constraint keeps one.
        return ReviewItem.objects.get(
            tenant=tenant,
            queue=queue,
            target_type=target_type,
            target_id=str(target_id),
            status__in=OPEN_STATUSES,
        )


def _locked_item(*, tenant: Tenant, item_id: int) -> ReviewItem:
    item = ReviewItem.objects.select_for_update().filter(tenant=tenant, pk=item_id).first()
    if item is None:
        raise not_found("review item")
    return item


def _lease_of_other(item: ReviewItem, actor: Actor, now: datetime) -> datetime | None:
    """When another person's live lease on the item ends; None if nobody else holds it."""
    lease_end = item.lease_expires_at
    if (
        item.status == ItemStatus.CLAIMED
        and lease_end is not None
        and lease_end > now
        and str(item.claimed_by_id) != actor.id
    ):
        return lease_end
    return None


def _require_decider(item: ReviewItem, actor: Actor) -> None:
    """Only people who may decide an item's queue may claim or decide it; auditors only read."""
    policy = policy_for(item.queue)
    roles = policy.roles if policy else ()
    if actor.kind != ActorKind.USER or actor.role not in roles:
        raise Problem(
            "role_required",
            f"Working on {item.queue} items needs the role {' or '.join(roles) or 'none'}.",
            status_code=403,
        )


def review_claim(*, tenant: Tenant, item_id: int, actor: Actor, user: Any) -> ReviewItem:
    """Take the item for `REVIEW_LEASE_SECONDS`; renews the lease when already held."""
    now = timezone.now()
    with transaction.atomic():
        item = _locked_item(tenant=tenant, item_id=item_id)
        _require_decider(item, actor)
        if item.status not in OPEN_STATUSES:
            raise Problem("item_closed", f"This item is already {item.status}.", status_code=409)
        held_until = _lease_of_other(item, actor, now)
        if held_until is not None:
            raise Problem(
                "item_claimed",
                f"{item.claimed_by} is working on this item until their lease ends.",
                status_code=409,
                claimed_by=str(item.claimed_by),
                lease_expires_at=held_until.isoformat(),
            )
        return move_row(
            REVIEW_ITEM_MACHINE,
            item,
            to=ItemStatus.CLAIMED,
            tenant=tenant,
            actor=actor,
            changes={
                "claimed_by": user,
                "lease_expires_at": now + timedelta(seconds=settings.REVIEW_LEASE_SECONDS),
            },
        )


def review_decide(
    *,
    tenant: Tenant,
    item_id: int,
    actor: Actor,
    verdict: str,
    reason_code: str = "",
    note: str = "",
    payload: dict[str, Any] | None = None,
) -> Decision:
    """Apply a verdict: the target changes, the decision and audit row are written, atomically."""
    payload = payload or {}
    now = timezone.now()
    with transaction.atomic():
        item = _locked_item(tenant=tenant, item_id=item_id)
        policy = policy_for(item.queue)
        if policy is None:
            raise Problem("queue_unavailable", f"Nothing can decide {item.queue} items yet.")
        _require_decider(item, actor)
        if item.status not in OPEN_STATUSES:
            raise Problem("item_closed", f"This item is already {item.status}.", status_code=409)
        if _lease_of_other(item, actor, now) is not None:
            raise Problem(
                "item_claimed",
                f"{item.claimed_by} holds this item; wait for their lease to end.",
                status_code=409,
            )
        if verdict not in policy.verdicts:
            raise Problem(
                "invalid_verdict",
                f"`{verdict}` is not a verdict for the {item.queue} queue.",
                errors={"verdict": [f"Choose one of: {', '.join(policy.verdicts)}."]},
                allowed=list(policy.verdicts),
            )
        _check_reason(policy, verdict=verdict, reason_code=reason_code, note=note)
        payload_in, payload_stored = _check_payload(policy, payload)
        if policy.handler.current_version(item=item) != item.target_version:
            raise Problem(
                "target_changed",
                "The item changed since this review opened. Reload it and decide again.",
                status_code=409,
            )
        # What an undo would restore, and the state it must still find (handlers that
        # can take a verdict back say so by snapshotting it).
        snapshot = getattr(policy.handler, "snapshot", None)
        before = snapshot(item=item, verdict=verdict) if snapshot is not None else None
        policy.handler.apply(
            DecisionInput(
                item=item,
                verdict=verdict,
                reason_code=reason_code,
                note=note,
                payload=payload_in,
                actor=actor,
            )
        )
        decision = Decision.objects.create(
            tenant=tenant,
            item=item,
            verdict=verdict,
            reason_code=reason_code,
            note=note,
            payload=payload_stored,
            actor_kind=actor.kind,
            actor_id=actor.id,
            actor_label=actor.label,
            undo_state={}
            if before is None or snapshot is None
            else {"before": before, "after": snapshot(item=item, verdict=verdict, before=before)},
        )
        recorded = getattr(policy.handler, "recorded", None)
        if recorded is not None:
            recorded(item=item, decision=decision)
        move_row(
            REVIEW_ITEM_MACHINE,
            item,
            to=ItemStatus.DECIDED,
            tenant=tenant,
            actor=actor,
            changes={"decided_at": now, "lease_expires_at": None},
        )
        follow_up = getattr(policy.handler, "follow_up", None)
        if follow_up is not None:
            follow_up(item=item)
        audit_record(
            tenant=tenant,
            actor=actor,
            verb=f"review.{verdict}",
            target_type=item.target_type,
            target_id=item.target_id,
            reason=reason_code,
            data={"review_item": item.pk, "queue": item.queue},
        )
    return decision


def review_undo(*, tenant: Tenant, decision_id: int, actor: Actor, user: Any) -> DecisionUndo:
    """Take a decision back within `REVIEW_UNDO_SECONDS`: its handler puts the target back
    as it was, the item reopens held by `user` so they can decide again, and the undo is
    recorded beside the decision, which stays as written. Only the decider or an admin
    may; a target that moved since the decision, or a verdict that cannot be called back
    (an erasure, a settled receipt), is refused and nothing changes."""
    now = timezone.now()
    with transaction.atomic():
        decision = (
            Decision.objects.select_for_update().filter(tenant=tenant, pk=decision_id).first()
        )
        if decision is None:
            raise not_found("decision")
        item = _locked_item(tenant=tenant, item_id=decision.item_id)
        _require_decider(item, actor)
        if not actor.is_admin and (decision.actor_kind, decision.actor_id) != (
            actor.kind,
            actor.id,
        ):
            raise Problem(
                "not_your_decision",
                f"Only {decision.actor_label} (who decided) or an admin can undo this decision.",
                status_code=403,
            )
        if DecisionUndo.objects.filter(decision=decision).exists():
            raise Problem("already_undone", "This decision was already undone.", status_code=409)
        policy = policy_for(item.queue)
        handler = policy.handler if policy else None
        snapshot = getattr(handler, "snapshot", None)
        revert = getattr(handler, "revert", None)
        if (
            handler is None
            or snapshot is None
            or revert is None
            or not decision.undo_state
            or decision.scrubbed_at
        ):
            raise Problem(
                "not_undoable",
                f"A “{decision.verdict}” decision on the {item.queue} queue cannot be taken back.",
                status_code=409,
            )
        undo_until = undo_deadline(decision=decision)
        if now >= undo_until:
            raise Problem(
                "undo_expired",
                "The time to undo this decision has passed. Open the target to change it.",
                status_code=409,
                undo_until=undo_until.isoformat(),
            )
        latest = item.decisions.order_by("-at", "-pk").values_list("pk", flat=True).first()
        if item.status != ItemStatus.DECIDED or latest != decision.pk:
            raise Problem(
                "target_changed",
                "The item was reopened or decided again since; this decision no longer stands.",
                status_code=409,
            )
        now_state = snapshot(
            item=item, verdict=decision.verdict, before=decision.undo_state["before"]
        )
        if now_state != decision.undo_state["after"]:
            raise Problem(
                "target_changed",
                "The target changed since the decision (an agent used or replaced it), so the "
                "decision cannot be undone. Open the target to change it.",
                status_code=409,
            )
        revert(
            UndoInput(
                item=item, decision=decision, before=decision.undo_state["before"], actor=actor
            )
        )
        undo = DecisionUndo.objects.create(
            tenant=tenant,
            decision=decision,
            actor_kind=actor.kind,
            actor_id=actor.id,
            actor_label=actor.label,
        )
        try:
            # Reopening a decided item is the undo role's move alone: the database
            # passes it only inside that role.
            move_row(
                REVIEW_ITEM_MACHINE,
                item,
                to=ItemStatus.CLAIMED,
                by=ITEM_UNDO_ROLE,
                tenant=tenant,
                actor=actor,
                changes={
                    "claimed_by": user,
                    "lease_expires_at": now + timedelta(seconds=settings.REVIEW_LEASE_SECONDS),
                    "decided_at": None,
                    # The target is as the decision found it; deciding again compares
                    # with that.
                    "target_version": handler.current_version(item=item),
                },
            )
        except IntegrityError as clash:
            # Another review of the same target opened since: that one is where to decide.
            raise Problem(
                "target_changed",
                "Another review of this target opened since the decision; decide there.",
                status_code=409,
            ) from clash
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="review.undo",
            target_type=item.target_type,
            target_id=item.target_id,
            data={
                "review_item": item.pk,
                "queue": item.queue,
                "decision": decision.pk,
                "verdict": decision.verdict,
            },
        )
    return undo


def _check_reason(policy: QueuePolicy, *, verdict: str, reason_code: str, note: str) -> None:
    """The queue's own reason vocabulary; a reason where its policy asks for one."""
    if reason_code and reason_code not in policy.reason_codes:
        raise Problem(
            "invalid_reason_code",
            f"`{reason_code}` is not a reason code of this queue.",
            errors={"reason_code": [f"Choose one of: {', '.join(policy.reason_codes)}."]},
            allowed=list(policy.reason_codes),
        )
    if policy.needs_reason(verdict) and not reason_code:
        if not policy.note_is_reason:
            raise Problem(
                "reason_required",
                "Say why: a rejection needs a reason code."
                if verdict in policy.negative_verdicts
                else f"Say why: “{policy.label(verdict)}” needs a reason code.",
                errors={"reason_code": ["A reason is required for this verdict."]},
            )
        if not note.strip():
            raise Problem(
                "reason_required",
                f"Say why: “{policy.label(verdict)}” needs a reason code or a note.",
                errors={
                    "reason_code": ["Choose a reason, or explain in the note."],
                    "note": ["Or write what you checked here."],
                },
            )
    if reason_code == OTHER_REASON[0] and not note.strip():
        raise Problem(
            "note_required",
            "The reason `other` needs a note explaining it.",
            errors={"note": ["Explain the reason."]},
        )


def _check_payload(
    policy: QueuePolicy, payload: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The queue's payload serializer judges the payload: what the handler gets (typed),
    and what the decision row keeps (the fields as sent, those the queue declares)."""
    serializer = policy.payload(data=payload)
    if not serializer.is_valid():
        errors = {name: [str(e) for e in _flat(value)] for name, value in serializer.errors.items()}
        raise Problem(
            "validation_error",
            "The decision's details are not valid: "
            + "; ".join(f"{name}: {' '.join(messages)}" for name, messages in errors.items()),
            errors=errors,
        )
    validated = dict(serializer.validated_data)
    return validated, {name: payload[name] for name in validated if name in payload}


def _flat(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [item for nested in value.values() for item in _flat(nested)]
    if isinstance(value, list):
        return [item for nested in value for item in _flat(nested)]
    return [value]


def review_cancel_for_target(
    *, tenant: Tenant, target_type: str, target_id: Any, queue: str | None = None
) -> int:
    """Close open items whose target went away (erased, superseded elsewhere)."""
    return reviews_cancel_for_targets(
        tenant=tenant, target_type=target_type, target_ids=[target_id], queue=queue
    )


def reviews_cancel_for_targets(
    *, tenant: Tenant, target_type: str, target_ids: Iterable[Any], queue: str | None = None
) -> int:
    """Close the open items of many targets, set-wise. Returns the items closed.

    The ids travel as one array parameter (`__any`), so 10,000 targets cost one locking
    read and one UPDATE, with no per-id placeholders.
    """
    ids = sorted({str(target_id) for target_id in target_ids})
    if not ids:
        return 0
    items = ReviewItem.objects.filter(
        tenant=tenant, target_type=target_type, target_id__any=ids, status__in=OPEN_STATUSES
    )
    if queue:
        items = items.filter(queue=queue)
    return len(
        move_many(
            REVIEW_ITEM_MACHINE,
            items,
            to=ItemStatus.CANCELLED,
            tenant=tenant,
            actor=None,
            changes={"lease_expires_at": None, "claimed_by": None},
        )
    )


# What a saved filter may keep of the queue page's query string.
SAVED_FILTER_KEYS = ("subject", "topic", "agent", "reason", "older_than", "sort")


def saved_filter_save(
    *, tenant: Tenant, owner: Any, queue: str, name: str, query: QueryDict
) -> SavedFilter:
    """Keep the queue page's filters and sort under a name (the same name replaces it).
    Only the filters the queue page reads are kept, each checked by its FilterSet."""
    name = " ".join(name.split())
    if not name or len(name) > 80:
        raise Problem(
            "name_required",
            "Give the filter a name of at most 80 characters.",
            errors={"name": ["Name it, e.g. “Alice, oldest first”."]},
        )
    if queue not in Queue.values:
        raise not_found("queue")
    kept = QueryDict(mutable=True)
    for key in SAVED_FILTER_KEYS:
        value = query.get(key, "").strip()
        if value:
            kept[key] = value
    form = ReviewItemFilter(kept, queryset=ReviewItem.objects.none()).form
    if not form.is_valid():
        raise Problem(
            "validation_error",
            "These filters are not valid, so they cannot be saved.",
            errors={k: [str(e) for e in v] for k, v in form.errors.items()},
        )
    if kept.get("sort") and kept["sort"] not in SORTS:
        kept.pop("sort")
    saved, _created = SavedFilter.objects.update_or_create(
        tenant=tenant,
        owner=owner,
        queue=queue,
        name=name,
        defaults={"query": kept.urlencode()[:1000]},
    )
    return saved


def saved_filter_delete(*, tenant: Tenant, owner: Any, filter_id: int) -> None:
    """Forget one of the person's saved filters; another person's is not found."""
    deleted, _ = SavedFilter.objects.filter(tenant=tenant, owner=owner, pk=filter_id).delete()
    if not deleted:
        raise not_found("saved filter")


def reviews_close_on_moves(moves: Moves) -> None:
    """Close the open review items a `common.transitions` move made pointless: the items
    of rows that reached a state nobody reviews (`StateMachine.closes_reviews_at`)."""
    machine = moves.machine
    if machine.review_target is None or moves.to not in machine.closes_reviews_at:
        return
    reviews_cancel_for_targets(
        tenant=moves.tenant,
        target_type=machine.review_target,
        target_ids=[pk for pk, _source in moves.moved],
    )
