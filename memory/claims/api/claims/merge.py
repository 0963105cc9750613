"""Editors merge a pending claim into the active one on its identity, by value type."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import api_context, role_required
from accounts.models import Role
from common.problems import not_found
from common.schema import NOT_FOUND, VALIDATION_ERROR
from memory.claims.api.claims.serializers import ClaimOutput
from memory.claims.models import Claim
from memory.claims.selectors.claims import claim_get
from memory.claims.services.merges import claim_merge_typed


class MergeIn(serializers.Serializer):
    pending = serializers.UUIDField(
        help_text="The pending claim (candidate or conflicted) to merge into this one."
    )
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)


class ClaimMergeView(APIView):
    permission_classes = [role_required(Role.EDITOR)]

    @extend_schema(
        request=MergeIn,
        responses={201: ClaimOutput, 400: VALIDATION_ERROR, 404: NOT_FOUND},
        summary="Merge a pending claim into this active claim by value type (editors)",
        description='Lists union, counters (`{"count": n}`) add and keep where each count '
        "came from, other objects merge key by key, anything else goes to the stronger "
        "authority, then the newer claim. Answers the new active revision (`201`); the "
        "active claim is superseded and the pending one rejected as merged. Errors: "
        "`not_found`, `merge_not_pending` (409), `merge_identity_mismatch`, "
        "`merge_types_differ` (409), `validation_error`.",
    )
    def post(self, request: Request, claim_id: Any) -> Response:
        context = api_context(request)
        data = MergeIn(data=request.data)
        data.is_valid(raise_exception=True)
        pending = data.validated_data["pending"]
        for wanted in (claim_id, pending):
            if claim_get(tenant=context.tenant, claim_id=wanted, allowed_subjects=None) is None:
                raise not_found("claim")
        claim = claim_merge_typed(
            tenant=context.tenant,
            actor=context.actor,
            into_id=claim_id,
            from_id=pending,
            reason=data.validated_data["reason"],
        )
        claim = Claim.objects.select_related("subject").prefetch_related("sources").get(pk=claim.pk)
        return Response(ClaimOutput(claim).data, status=status.HTTP_201_CREATED)
