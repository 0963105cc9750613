"""Console forms of the memory app. They validate input only; the services decide."""

from __future__ import annotations

from typing import Any

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


class OperationPolicyForm(forms.Form):
    platform = forms.ChoiceField(help_text="The platform the operation writes to.")
    operation = forms.CharField(
        max_length=200, help_text="As receipts name it, e.g. articles.create."
    )
    require_external_id = forms.BooleanField(
        required=False,
        label="Require the external id",
        help_text="The platform's id for the effect must come with the report.",
    )
    evidence_fields = forms.CharField(
        required=False,
        max_length=2000,
        label="Evidence fields",
        help_text="Comma-separated keys the report's evidence must carry, e.g. url, revision.",
    )
    require_verifying_read = forms.BooleanField(
        required=False,
        label="Require a verifying read",
        help_text="Only memdesk's own read of the platform may mark the receipt succeeded.",
    )

    def __init__(self, *args: Any, platforms: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        platform = self.fields["platform"]
        assert isinstance(platform, forms.ChoiceField)
        platform.choices = [(name, name) for name in platforms]

    def clean_evidence_fields(self) -> list[str]:
        raw = self.cleaned_data.get("evidence_fields") or ""
        return [name.strip() for name in raw.split(",") if name.strip()]


class LedgerSearchForm(forms.Form):
    """The ledger page's search: the same modes and bounds as `GET /api/v1/events/search`."""

    subject = forms.CharField(max_length=255, help_text="kind:ref, e.g. user:alice")
    q = forms.CharField(max_length=500, required=False, label="Mentions")
    mode = forms.ChoiceField(
        choices=[
            ("discovery", "Runs that mention it"),
            ("browse", "Recent runs"),
            ("scroll", "One run"),
        ],
        required=False,
    )
    run_id = forms.CharField(max_length=200, required=False, label="Run")
    after = forms.IntegerField(min_value=0, required=False, widget=forms.HiddenInput)
