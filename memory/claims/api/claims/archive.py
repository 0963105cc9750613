"""Editors archive a claim (kept, never recalled) and restore it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import api_context, role_required
from accounts.models import Role
from common.problems import not_found
from common.schema import ILLEGAL_TRANSITION, NOT_FOUND
from memory.claims.api.claims.serializers import ClaimOutput
from memory.claims.models import Claim
from memory.claims.selectors.claims import claim_get
from memory.claims.services.archive import claim_archive, claim_restore


class ArchiveIn(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)


def _move(request: Request, claim_id: Any, move: Callable[..., Claim]) -> Response:
    """Archive or restore: the claim must be the tenant's; the service guards the move."""
    context = api_context(request)
    if claim_get(tenant=context.tenant, claim_id=claim_id, allowed_subjects=None) is None:
        raise not_found("claim")
    data = ArchiveIn(data=request.data)
    data.is_valid(raise_exception=True)
    moved = move(
        tenant=context.tenant,
        actor=context.actor,
        claim_id=claim_id,
        reason=data.validated_data["reason"],
    )
    claim = Claim.objects.select_related("subject").prefetch_related("sources").get(pk=moved.pk)
    return Response(ClaimOutput(claim).data)


class ClaimArchiveView(APIView):
    permission_classes = [role_required(Role.EDITOR)]

    @extend_schema(
        request=ArchiveIn,
        responses={200: ClaimOutput, 404: NOT_FOUND, 409: ILLEGAL_TRANSITION},
        summary="Archive an active claim (editors): kept, never recalled, restorable",
        description="Errors: `not_found`, `illegal_transition` (only an active claim is "
        "archived; `allowed` lists what it may become).",
    )
    def post(self, request: Request, claim_id: Any) -> Response:
        return _move(request, claim_id, claim_archive)


class ClaimRestoreView(APIView):
    permission_classes = [role_required(Role.EDITOR)]

    @extend_schema(
        request=ArchiveIn,
        responses={200: ClaimOutput, 404: NOT_FOUND, 409: ILLEGAL_TRANSITION},
        summary="Restore an archived claim (editors)",
        description="Errors: `not_found`, `illegal_transition` (not archived), "
        "`identity_taken` (409: another active claim holds its identity; `active` names it).",
    )
    def post(self, request: Request, claim_id: Any) -> Response:
        return _move(request, claim_id, claim_restore)
