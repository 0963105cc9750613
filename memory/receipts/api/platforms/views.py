"""Admins register the platforms receipts may look their effects up on.

A session endpoint for admins' automation: agent tokens get `403
role_required` whatever their capabilities (agents never choose which hosts
memdesk contacts), and so do editors and auditors; other tenants' platforms
are never listed.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import api_context, role_required
from common.problems import not_found
from common.schema import ADMIN_AUTH
from memory.receipts.api.platforms.serializers import (
    AbsenceProofInput,
    OperationPolicyInput,
    OperationPolicyOutput,
    PlatformOutput,
    PlatformRegisterInput,
    VerifierControlsInput,
)
from memory.receipts.models.platforms import Platform
from memory.receipts.selectors.platforms import (
    operation_policies_list,
    platform_get,
    platforms_list,
)
from memory.receipts.services.platforms import (
    operation_policy_set,
    platform_absence_proof_set,
    platform_register,
)
from memory.receipts.services.verifier_controls import platform_controls_set

ADMINS = role_required("admin")
_NOT_FOUND = OpenApiResponse(description="Problem details: not_found (no such platform)")


class PlatformListCreateView(APIView):
    permission_classes = [ADMINS]

    @extend_schema(
        responses={200: PlatformOutput(many=True), **ADMIN_AUTH},
        summary="List the tenant's registered platforms (admins)",
    )
    def get(self, request: Request) -> Response:
        platforms = platforms_list(tenant=api_context(request).tenant)
        return Response(PlatformOutput(platforms, many=True).data)

    @extend_schema(
        request=PlatformRegisterInput,
        responses={
            201: PlatformOutput,
            200: OpenApiResponse(
                PlatformOutput, description="The same platform was already registered."
            ),
            400: OpenApiResponse(
                description="Problem details: validation_error, invalid_platform_name, "
                "invalid_base_url, platform_address_refused (the host resolves to a "
                "loopback, private, link-local, multicast or reserved address and "
                "allow_private is off), lookup_template_without_key, "
                "invalid_lookup_template, invalid_absence_proof, "
                "invalid_key_retention_seconds, invalid_consistency_delay_seconds"
            ),
            409: OpenApiResponse(
                description="Problem details: platform_name_taken (the name is registered "
                "with another base URL, address policy or proof of absence)"
            ),
            **ADMIN_AUTH,
        },
        summary="Register a platform receipts may read from (admins)",
        description=(
            "A receipt's `reconciler.lookup_url` must start with a registered base URL (or "
            "name the `platform` with a `lookup_path`); otherwise `400 "
            "platform_not_registered`. memdesk resolves the host itself, now and on every "
            "read, and connects only to the address it checked. Session and CSRF token "
            "required."
        ),
    )
    def post(self, request: Request) -> Response:
        context = api_context(request)
        data = PlatformRegisterInput(data=request.data)
        data.is_valid(raise_exception=True)
        platform, created = platform_register(
            tenant=context.tenant, actor=context.actor, **data.validated_data
        )
        return Response(
            PlatformOutput(platform).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )


class PlatformAbsenceProofView(APIView):
    permission_classes = [ADMINS]

    @extend_schema(
        request=AbsenceProofInput,
        responses={
            200: PlatformOutput,
            400: OpenApiResponse(
                description="Problem details: validation_error, lookup_template_without_key, "
                "invalid_lookup_template, invalid_absence_proof, "
                "invalid_key_retention_seconds, invalid_consistency_delay_seconds"
            ),
            404: _NOT_FOUND,
            **ADMIN_AUTH,
        },
        summary="Change how a platform proves absence (admins)",
        description=(
            "Replaces the platform's `absence_proof`, `lookup_template`, "
            "`key_retention_seconds` and `consistency_delay_seconds` (audited with what they "
            "were). Every read claimed from then on is judged by them. Without a proof, an "
            "outcome a read cannot confirm goes to a person. Session and CSRF token required."
        ),
    )
    def put(self, request: Request, name: str) -> Response:
        context = api_context(request)
        if platform_get(tenant=context.tenant, name=name) is None:
            raise not_found("platform")
        data = AbsenceProofInput(data=request.data)
        data.is_valid(raise_exception=True)
        platform = platform_absence_proof_set(
            tenant=context.tenant, actor=context.actor, name=name, **data.validated_data
        )
        return Response(PlatformOutput(platform).data)


class PlatformControlsView(APIView):
    permission_classes = [ADMINS]

    @extend_schema(
        request=VerifierControlsInput,
        responses={
            200: PlatformOutput,
            400: OpenApiResponse(
                description="Problem details: validation_error, controls_identical"
            ),
            404: _NOT_FOUND,
            **ADMIN_AUTH,
        },
        summary="Set a platform's verifier controls (admins)",
        description=(
            "A key the platform never saw (`known_absent_key`) and, optionally, one it holds "
            "(`known_present_key`). Beat reads both through the platform's registered lookup; "
            "a wrong answer marks the verifier unhealthy (`verifier_unhealthy_since`, "
            "`verifier_unhealthy_reason`), and until a run passes no read of the platform "
            "makes a receipt `safe_to_retry` (it goes to `manual_review`, reason "
            "`verifier_unhealthy`). Audited. Session and CSRF token required."
        ),
    )
    def put(self, request: Request, name: str) -> Response:
        context = api_context(request)
        data = VerifierControlsInput(data=request.data)
        data.is_valid(raise_exception=True)
        platform = platform_controls_set(
            tenant=context.tenant, actor=context.actor, name=name, **data.validated_data
        )
        return Response(PlatformOutput(platform).data)


class OperationPolicyListSetView(APIView):
    permission_classes = [ADMINS]

    def _platform(self, request: Request, name: str) -> Platform:
        platform = platform_get(tenant=api_context(request).tenant, name=name)
        if platform is None:
            raise not_found("platform")
        return platform

    @extend_schema(
        responses={200: OperationPolicyOutput(many=True), 404: _NOT_FOUND, **ADMIN_AUTH},
        summary="List the operation policies registered with a platform (admins)",
    )
    def get(self, request: Request, name: str) -> Response:
        platform = self._platform(request, name)
        policies = operation_policies_list(tenant=api_context(request).tenant).filter(
            platform=platform
        )
        return Response(OperationPolicyOutput(policies, many=True).data)

    @extend_schema(
        request=OperationPolicyInput,
        responses={
            201: OperationPolicyOutput,
            200: OpenApiResponse(
                OperationPolicyOutput, description="The operation's policy was replaced."
            ),
            400: OpenApiResponse(
                description="Problem details: validation_error, invalid_operation, "
                "invalid_evidence_field, policy_requires_nothing"
            ),
            404: _NOT_FOUND,
            **ADMIN_AUTH,
        },
        summary="Say what an agent's `succeeded` needs for an operation (admins)",
        description=(
            "One policy per operation name in the tenant; setting it again replaces it "
            "(audited with what it required before). From then on an agent's move to "
            "`succeeded` for a receipt of that operation that lacks the external id or a "
            "named evidence field is refused with `409 evidence_required`, listing them in "
            "`missing` (and per field in `errors`); the receipt stays `submitted`. With "
            "`require_verifying_read`, a complete report moves the receipt to "
            "`outcome_unknown` (reason `verifying_read_required`) and only reconciliation's "
            "read of the platform can make it `succeeded`. Session and CSRF token required."
        ),
    )
    def post(self, request: Request, name: str) -> Response:
        context = api_context(request)
        self._platform(request, name)
        data = OperationPolicyInput(data=request.data)
        data.is_valid(raise_exception=True)
        policy, created = operation_policy_set(
            tenant=context.tenant, actor=context.actor, platform=name, **data.validated_data
        )
        return Response(
            OperationPolicyOutput(policy).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )
