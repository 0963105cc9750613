"""Agent endpoints for receipts (write before the call), checkpoints and recovery."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import api_context, capability_required
from common.idempotency import HEADER as IDEMPOTENCY_HEADER
from common.idempotency import idempotent
from common.pagination import CursorPage
from common.problems import not_found
from common.query import query_values
from common.schema import AGENT_AUTH, NOT_FOUND, VALIDATION_ERROR
from memory.receipts.api.receipts.serializers import (
    CheckpointInput,
    CheckpointOutput,
    ReceiptCreateInput,
    ReceiptDetailOutput,
    ReceiptListInput,
    ReceiptOutput,
    ReceiptTransitionInput,
    RecoveryInput,
    RecoveryLeaseOutput,
    RecoveryOutput,
    RecoveryReleaseInput,
)
from memory.receipts.models.receipts import Receipt
from memory.receipts.selectors.receipts import checkpoint_get, receipt_detail, receipts_list
from memory.receipts.services.receipts import receipt_create, receipt_transition
from memory.receipts.services.recovery import checkpoint_save, recovery_decide
from memory.receipts.services.recovery_leases import recovery_lease_release

RECEIPTS_WRITE = capability_required("receipts:write")
CHECKPOINTS_WRITE = capability_required("checkpoints:write")
# Recovery reads (and leases a task to the run it sends to act), and an agent that
# writes receipts must be able to ask it.
RECOVERY = capability_required("checkpoints:write", "receipts:write")


class ReceiptPage(CursorPage):
    ordering = ("-created_at", "-id")


class ReceiptListCreateView(ListAPIView):
    permission_classes = [RECEIPTS_WRITE]
    serializer_class = ReceiptOutput
    pagination_class = ReceiptPage

    def get_queryset(self) -> QuerySet[Receipt]:
        if getattr(self, "swagger_fake_view", False):
            return Receipt.objects.none()
        filters = ReceiptListInput(data=query_values(self.request))
        filters.is_valid(raise_exception=True)
        context = api_context(self.request)
        return receipts_list(tenant=context.tenant, actor=context.actor, **filters.validated_data)

    @extend_schema(
        parameters=[ReceiptListInput],
        responses={
            200: ReceiptOutput(many=True),
            400: VALIDATION_ERROR,
            **AGENT_AUTH,
        },
        summary="List receipts (cursor pagination, newest first)",
        description=(
            "Only the calling token's own receipts, unless it holds `receipts:operate` "
            "(then every receipt of the tenant)."
        ),
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        request=ReceiptCreateInput,
        responses={
            201: ReceiptOutput,
            200: OpenApiResponse(
                ReceiptOutput,
                description="The idempotency_key already names this effect: the existing "
                "receipt, in whatever state it is now.",
            ),
            400: OpenApiResponse(
                description="Problem details: validation_error, secret_in_intent, "
                "invalid_reconciler, platform_not_registered (an http lookup outside every "
                "platform an admin registered), idempotency_key_invalid, run_not_registered, "
                "unknown_effect, compensation_invalid"
            ),
            409: OpenApiResponse(
                description="Problem details: idempotency_key_reused (same key, another "
                "operation, target or intent), request_in_progress, idempotent_reply_erased "
                "(the Idempotency-Key's request was done, but a deletion erased its stored "
                "reply: `id` names what it made)"
            ),
            **AGENT_AUTH,
        },
        summary="Write a receipt before making an external call",
        description=(
            "Commit the receipt in `planned` before touching the outside world (in "
            "`awaiting_approval` when the operation's policy wants a person's approval). The "
            "`intent_fingerprint` is sha256 over the canonical JSON of `intent`. Errors: "
            "`secret_in_intent`, `invalid_reconciler`, `platform_not_registered`, "
            "`idempotency_key_reused`, "
            "`validation_error`. The Idempotency-Key header is honoured too (a replay "
            "returns the original response) and stands in for a missing body "
            "`idempotency_key`; with neither, the key is derived from the intent's "
            "fingerprint, the target and the policy version (`derived:sha256:…`), so the same "
            "content sent to the same target under the same policy is one effect. `run` "
            "names a registered run (`run_not_registered` otherwise); `compensates` plans "
            "the undoing of an effect receipt (`unknown_effect`, `compensation_invalid`). "
            "The receipt belongs to the calling token; a key another "
            "token's receipt holds is `idempotency_key_reused`, naming no receipt."
        ),
    )
    @idempotent
    def post(self, request: Request) -> Response:
        context = api_context(request)
        data = ReceiptCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        # Without either, memdesk derives the key from the intent, target and policy version.
        key = values.pop("idempotency_key", "") or request.headers.get(IDEMPOTENCY_HEADER, "")
        receipt, created = receipt_create(
            tenant=context.tenant, actor=context.actor, idempotency_key=key.strip(), **values
        )
        return Response(
            ReceiptOutput(receipt).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
            headers={"Location": f"/api/v1/receipts/{receipt.pk}"},
        )


class ReceiptDetailView(APIView):
    permission_classes = [RECEIPTS_WRITE]

    @extend_schema(
        responses={200: ReceiptDetailOutput, 404: NOT_FOUND, **AGENT_AUTH},
        summary="Read a receipt with its transitions and reconciliation reads",
        description=(
            "Another token's receipt is `404 not_found`, as another tenant's is, unless "
            "the caller holds `receipts:operate`."
        ),
    )
    def get(self, request: Request, receipt_id: UUID) -> Response:
        context = api_context(request)
        receipt = receipt_detail(tenant=context.tenant, actor=context.actor, receipt_id=receipt_id)
        if receipt is None:
            raise not_found("receipt")
        return Response(ReceiptDetailOutput(receipt).data)


class ReceiptTransitionView(APIView):
    permission_classes = [RECEIPTS_WRITE]

    @extend_schema(
        request=ReceiptTransitionInput,
        responses={
            200: ReceiptOutput,
            400: OpenApiResponse(
                description="Problem details: validation_error, secret_in_evidence, invalid_lease"
            ),
            404: NOT_FOUND,
            409: OpenApiResponse(
                description="Problem details: illegal_transition (with `allowed`: the states "
                "this caller may move the receipt to now), evidence_required (the operation's "
                "policy needs what `missing` lists: `external_id`, `evidence.<field>`; "
                "`required` lists everything it asks; the receipt was not moved), "
                "approval_required (the operation's policy wants a person's approval first: "
                "the receipt waits in `awaiting_approval`), "
                "external_id_conflict, idempotency_key_reused, request_in_progress"
            ),
            **AGENT_AUTH,
        },
        summary="Report what happened to the call",
        description=(
            "Agents move `planned → submitted` just before the call, then `submitted → "
            "succeeded | rejected | outcome_unknown`. Anything else is `409 "
            "illegal_transition` with `allowed`. Reconciliation (workers) and editors make "
            "the other moves. Send an Idempotency-Key header to retry this call safely. "
            "Where an admin set an operation policy, an agent's `succeeded` must carry what "
            "it requires (else `409 evidence_required`); a policy requiring a verifying read "
            "answers `200` with the receipt in `outcome_unknown` (its transition's reason "
            "`verifying_read_required`): memdesk reads the platform, and only that read "
            "makes it `succeeded`. A policy requiring approval holds the receipt in "
            "`awaiting_approval` until a person other than the token's owner approves it in "
            "the approvals queue; submitting before is `409 approval_required`. "
            "Only the token that planned the receipt (or one holding "
            "`receipts:operate`) moves it; for others it is `404 not_found`."
        ),
    )
    @idempotent
    def post(self, request: Request, receipt_id: UUID) -> Response:
        context = api_context(request)
        data = ReceiptTransitionInput(data=request.data)
        data.is_valid(raise_exception=True)
        receipt = receipt_transition(
            tenant=context.tenant,
            receipt_id=receipt_id,
            actor=context.actor,
            **data.validated_data,
        )
        return Response(ReceiptOutput(receipt).data)


def _check_task_key(task_key: str) -> None:
    if not task_key.strip() or len(task_key) > 255:
        raise ValidationError({"task_key": ["A task key is 1 to 255 characters."]})


class CheckpointView(APIView):
    permission_classes = [CHECKPOINTS_WRITE]

    @extend_schema(
        request=CheckpointInput,
        responses={
            200: CheckpointOutput,
            400: OpenApiResponse(
                description="Problem details: validation_error, unknown_effect, run_not_registered"
            ),
            404: NOT_FOUND,
            **AGENT_AUTH,
        },
        summary="Save where a task stands (create or replace)",
        description=(
            "`effects` are receipt ids the token may see (`unknown_effect` otherwise). "
            "Recovery reads the checkpoint together with the current state of those "
            "receipts. The checkpoint belongs to the token that first saved it: another "
            "token's save of the same key is `404 not_found` and changes nothing, unless it "
            "holds `receipts:operate` (the owner stays). Every checkpoint expires: without "
            "`expires_at` it lives the tenant's default lifetime from the save. "
            "`resume_after` holds recovery at `wait` until then."
        ),
    )
    def put(self, request: Request, task_key: str) -> Response:
        _check_task_key(task_key)
        context = api_context(request)
        data = CheckpointInput(data=request.data)
        data.is_valid(raise_exception=True)
        checkpoint, _ = checkpoint_save(
            tenant=context.tenant, actor=context.actor, task_key=task_key, **data.validated_data
        )
        return Response(CheckpointOutput(checkpoint).data)

    @extend_schema(
        responses={200: CheckpointOutput, 404: NOT_FOUND, **AGENT_AUTH},
        summary="Read a task's checkpoint",
        description=(
            "Another token's checkpoint is `404 not_found` unless the caller holds "
            "`receipts:operate`."
        ),
    )
    def get(self, request: Request, task_key: str) -> Response:
        context = api_context(request)
        checkpoint = checkpoint_get(tenant=context.tenant, actor=context.actor, task_key=task_key)
        if checkpoint is None:
            raise not_found("checkpoint")
        return Response(CheckpointOutput(checkpoint).data)


class RecoveryView(APIView):
    permission_classes = [RECOVERY]

    @extend_schema(
        request=RecoveryInput,
        responses={
            200: RecoveryOutput,
            400: VALIDATION_ERROR,
            **AGENT_AUTH,
        },
        summary="Ask what to do after a crash, timeout or second trigger",
        description=(
            "Without `run_id`, read-only: asking changes no checkpoint, receipt or ledger "
            "row, however often. With `run_id`, "
            "an answer that sends the run to act (fresh, resume, verify_only) gives it the "
            "task's recovery lease for `lease_seconds`; while a run holds it, every other run "
            "is answered `in_progress`/`lease_held` with `lease` (holder and expiry), and the "
            "holder asking again gets its answer again with `folded: true`. "
            "Rules, first match wins: a lease held by another run → `in_progress`/`lease_held`; no "
            "checkpoint → `fresh`/`no_checkpoint`; expired → `fresh`/`checkpoint_expired`; "
            "other input fingerprint → `fresh`/`input_changed`; an effect in manual_review → "
            "`escalate`/`effect_in_manual_review`; an effect submitted, outcome_unknown or "
            "reconciling → `verify_only`/`effect_unverified`; stage complete and every effect "
            "succeeded → `no_op`/`already_verified`, or `resume`/`next_stage` when "
            "`allowed_next_stages` is not empty; retries spent → "
            "`escalate`/`retry_budget_exhausted`; otherwise `resume`/`incomplete_stage`. "
            "Where the answer would be `escalate` (manual review, or retries spent with "
            "effects succeeded or in manual review), the failed effects' operations have a "
            "policy with `compensate_on_failure` and each of those effects has a "
            "compensation planned (or safe to retry), the answer is "
            "`compensate`/`compensation_planned` with those `compensations`. "
            "A `resume` asked before the checkpoint's `resume_after` is `wait`/`resume_after`. "
            "Another token's checkpoint (unless the caller holds `receipts:operate`) is "
            "answered like no checkpoint. "
            "Needs `checkpoints:write` or `receipts:write`. No Idempotency-Key is needed: "
            "the call creates nothing. Send `triggered_at` (when the run was triggered) and "
            "the decision's latency, for the p50/p95 on the dashboard and /metrics, is "
            "counted from it. Each answer is logged (`answer_id`; `GET /api/v1/recovery/answers`), "
            "the only row asking leaves; a verdict on it feeds recovery correctness."
        ),
    )
    def post(self, request: Request) -> Response:
        data = RecoveryInput(data=request.data)
        data.is_valid(raise_exception=True)
        context = api_context(request)
        answer = recovery_decide(tenant=context.tenant, actor=context.actor, **data.validated_data)
        return Response(
            RecoveryOutput(
                {
                    "decision": answer.decision,
                    "reason": answer.reason,
                    "checkpoint": answer.checkpoint,
                    "effects": answer.effects,
                    "lease": answer.lease,
                    "folded": answer.folded,
                    "answer_id": answer.answer_id,
                    "compensations": answer.compensations,
                }
            ).data
        )


class RecoveryReleaseView(APIView):
    permission_classes = [RECOVERY]

    @extend_schema(
        request=RecoveryReleaseInput,
        responses={200: RecoveryLeaseOutput, 400: VALIDATION_ERROR, 404: NOT_FOUND, **AGENT_AUTH},
        summary="Release the recovery lease a run holds",
        description=(
            "The run that was sent to act is done (or gives up): the next trigger may decide "
            "at once instead of waiting for the lease to expire. Only the holding run "
            "releases it; a lease held by another run, expired, released or unknown is "
            "`404 not_found` and changes nothing."
        ),
    )
    def post(self, request: Request) -> Response:
        data = RecoveryReleaseInput(data=request.data)
        data.is_valid(raise_exception=True)
        context = api_context(request)
        lease = recovery_lease_release(
            tenant=context.tenant, actor=context.actor, **data.validated_data
        )
        return Response(RecoveryLeaseOutput(lease).data)
