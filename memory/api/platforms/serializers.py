"""Platforms over the API: validators in, serializers out."""

from __future__ import annotations

from rest_framework import serializers

from memory.models.platforms import Platform


class PlatformRegisterInput(serializers.Serializer):
    name = serializers.CharField(
        max_length=63, help_text="Lower-case letters, digits, `.`, `_`, `-`; unique per tenant."
    )
    base_url = serializers.CharField(
        max_length=1000,
        help_text="An absolute http(s) URL without credentials, query or fragment; every "
        "lookup URL of this platform must start with it.",
    )
    allow_private = serializers.BooleanField(
        default=False,
        help_text="Let lookups read loopback, private, link-local and reserved addresses "
        "(a platform on your own network). Off: such addresses are refused.",
    )


class PlatformOutput(serializers.ModelSerializer):
    created_by = serializers.CharField(source="created_by_label")

    class Meta:
        model = Platform
        fields = ["id", "name", "base_url", "allow_private", "created_by", "created_at"]
