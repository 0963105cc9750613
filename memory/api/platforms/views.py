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
from common.schema import ADMIN_AUTH
from memory.api.platforms.serializers import PlatformOutput, PlatformRegisterInput
from memory.selectors.platforms import platforms_list
from memory.services.platforms import platform_register

ADMINS = role_required("admin")


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
                "allow_private is off)"
            ),
            409: OpenApiResponse(
                description="Problem details: platform_name_taken (the name is registered "
                "with another base URL or address policy)"
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
