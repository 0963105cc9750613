"""Reads of receipts and checkpoints. Every one takes the tenant: forgetting it is a TypeError.

Receipts and checkpoints belong to the agent token that wrote them. Reads made on
an agent's behalf take its `actor` and see only what `reach` lets it see, so a
colleague's effect is as missing as another tenant's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from uuid import UUID

from django.db.models import OuterRef, Prefetch, Q, QuerySet, Subquery

from accounts.actors import Actor
from accounts.models import ActorKind, Capability, Tenant
from accounts.selectors import persons_of
from common.fingerprints import identifier_forms
from memory.receipts.models.receipts import (
    Checkpoint,
    Receipt,
    ReceiptState,
    ReceiptTransition,
    ReconciliationRead,
)


def reach(actor: Actor) -> Q:
    """The receipts and checkpoints `actor` may see, read or move (both keep `token_id`).

    A token reaches only its own, unless it holds `receipts:operate`. People
    (editors settle what reconciliation could not) and memdesk's workers reach
    all. A row with no owner (planned by a person, or saved before checkpoints
    had owners) fails closed: no ordinary token reaches it.
    """
    if actor.kind != ActorKind.AGENT or Capability.RECEIPTS_OPERATE in actor.capabilities:
        return Q()
    if actor.token_id is None:
        # Only memdesk's own seeding acts as an agent without a token (the API always
        # has one); what it makes has no owner either, and it keeps reaching that.
        return Q(token_id__isnull=True)
    return Q(token_id=actor.token_id)


def receipt_get(*, tenant: Tenant, receipt_id: UUID | str) -> Receipt | None:
    return Receipt.objects.filter(tenant=tenant, pk=receipt_id).first()


def receipt_detail(*, tenant: Tenant, actor: Actor, receipt_id: UUID | str) -> Receipt | None:
    """A receipt with its timeline: every transition and every reconciliation read."""
    return (
        Receipt.objects.filter(reach(actor), tenant=tenant, pk=receipt_id)
        .prefetch_related(
            Prefetch("transitions", queryset=ReceiptTransition.objects.order_by("at", "id")),
            Prefetch("reads", queryset=ReconciliationRead.objects.order_by("at", "id")),
        )
        .first()
    )


def receipts_list(
    *, tenant: Tenant, actor: Actor, state: str | None = None, operation: str | None = None
) -> QuerySet[Receipt]:
    receipts = Receipt.objects.filter(reach(actor), tenant=tenant)
    if state:
        receipts = receipts.filter(state=state)
    if operation:
        receipts = receipts.filter(operation=operation)
    return receipts


def receipts_by_ids(*, tenant: Tenant, receipt_ids: Iterable[UUID | str]) -> list[Receipt]:
    """The tenant's receipts among `receipt_ids`, in the order given; unknown ids are left out.

    Not limited by owner: recovery reads a checkpoint's effects with it, and whoever
    saved them reached them then (see `checkpoint_save`).
    """
    ids = [str(receipt_id) for receipt_id in receipt_ids]
    found = {str(r.pk): r for r in Receipt.objects.filter(tenant=tenant, pk__in=ids)}
    return [found[receipt_id] for receipt_id in ids if receipt_id in found]


@dataclass(frozen=True)
class ReceiptOutcome:
    """What a receipt shows as an experience's evidence: its state, and whether the
    one citing it is who reported that state (then it is no independent evidence)."""

    state: str
    self_reported: bool


def receipt_outcomes(
    *, tenant: Tenant, actor: Actor, receipt_ids: Iterable[UUID]
) -> dict[UUID, ReceiptOutcome]:
    """The outcome of each receipt among `receipt_ids` that `actor` reaches.

    A state counts as reported by `actor` when the transition into it was made by the
    same person: the same token, another token of its owner, or the owner signed in. A
    reconciler's read, a platform or someone else settling it is evidence the agent did
    not write about itself.
    """
    ids = list(receipt_ids)
    if not ids:
        return {}
    settling = ReceiptTransition.objects.filter(
        receipt=OuterRef("pk"), to_state=OuterRef("state")
    ).order_by("-at", "-id")
    rows = list(
        Receipt.objects.filter(reach(actor), tenant=tenant, pk__in=ids)
        .annotate(
            settled_by_kind=Subquery(settling.values("actor_kind")[:1]),
            settled_by_id=Subquery(settling.values("actor_id")[:1]),
        )
        .values_list("pk", "state", "settled_by_kind", "settled_by_id")
    )
    # Compared as people: another token of the same owner, or the owner signed in, is
    # the same person reporting on their own effect (an ownerless token is only itself).
    persons = persons_of(
        tenant=tenant, actors={(kind, by) for _, _, kind, by in rows if kind is not None}
    )
    return {
        pk: ReceiptOutcome(
            state=state,
            self_reported=kind not in (None, ActorKind.SYSTEM)
            and persons[(kind, by)] == actor.person,
        )
        for pk, state, kind, by in rows
    }


def checkpoint_stored(*, tenant: Tenant, task_key: str, lock: bool = False) -> Checkpoint | None:
    """The checkpoint of `task_key` whoever owns it, also once a deletion replaced the key
    by its digest. Only for deciding whether a save may replace it; never shown."""
    stored = Checkpoint.objects.filter(tenant=tenant, task_key__in=identifier_forms(task_key))
    return (stored.select_for_update() if lock else stored).first()


def checkpoint_get(*, tenant: Tenant, actor: Actor, task_key: str) -> Checkpoint | None:
    """The checkpoint of `task_key`, if `actor` reaches it."""
    return Checkpoint.objects.filter(
        reach(actor), tenant=tenant, task_key__in=identifier_forms(task_key)
    ).first()


def receipt_by_key(*, tenant: Tenant, idempotency_key: str) -> Receipt | None:
    """The receipt named by `idempotency_key`, also once a deletion replaced the key by
    its digest: a retry after the deletion must find it, not make a second effect."""
    return Receipt.objects.filter(
        tenant=tenant, idempotency_key__in=identifier_forms(idempotency_key)
    ).first()


def receipt_compensations(receipt: Receipt) -> QuerySet[Receipt]:
    """The compensations planned for `receipt`, oldest first (whoever planned them: they
    undo an effect the reader already reaches)."""
    return Receipt.objects.filter(tenant_id=receipt.tenant_id, compensates=receipt).order_by(
        "created_at", "id"
    )


def compensation_ids(receipt: Receipt) -> list[UUID]:
    return list(receipt_compensations(receipt).values_list("pk", flat=True))


def receipt_for_console(*, tenant: Tenant, receipt_id: UUID | str) -> Receipt | None:
    """A receipt with its timeline and the effect it compensates, for a person's page."""
    return (
        Receipt.objects.select_related("compensates")
        .prefetch_related(
            Prefetch("transitions", queryset=ReceiptTransition.objects.order_by("at", "id")),
            Prefetch("reads", queryset=ReconciliationRead.objects.order_by("at", "id")),
        )
        .filter(tenant=tenant, pk=receipt_id)
        .first()
    )


# A compensation in one of these has not run yet: recovery may send the agent to run it.
PENDING_COMPENSATION_STATES = (ReceiptState.PLANNED, ReceiptState.SAFE_TO_RETRY)


def pending_compensations(*, tenant: Tenant, effect_ids: Iterable[UUID]) -> list[Receipt]:
    """The compensations planned for `effect_ids` that have not run yet, oldest first."""
    return list(
        Receipt.objects.filter(
            tenant=tenant,
            compensates__in=list(effect_ids),
            state__in=PENDING_COMPENSATION_STATES,
        ).order_by("created_at", "id")
    )
