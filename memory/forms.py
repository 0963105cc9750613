"""Console forms of the memory app. They validate input only; the services decide."""

from __future__ import annotations

from django import forms

from memory.models.platforms import PLATFORM_NAME_PATTERN


class PlatformRegisterForm(forms.Form):
    name = forms.RegexField(
        regex=PLATFORM_NAME_PATTERN,
        max_length=63,
        help_text="Lower-case letters, digits, `.`, `_` and `-`, e.g. blog.",
        error_messages={"invalid": "Use lower-case letters, digits, `.`, `_` and `-`."},
    )
    base_url = forms.CharField(
        label="Base URL",
        max_length=1000,
        help_text="Every lookup URL of this platform must start with it, e.g. "
        "https://blog.example/api/.",
    )
    allow_private = forms.BooleanField(
        required=False,
        label="Allow private networks",
        help_text="Only for a platform on your own network: lookups may then read "
        "loopback, private, link-local and reserved addresses.",
    )
