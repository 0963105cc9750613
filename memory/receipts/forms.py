"""The platforms page's forms. They validate input only; the services decide."""

from __future__ import annotations

from typing import Any

from django import forms

from memory.receipts.models.platforms import KEY_PLACEHOLDER, PLATFORM_NAME_PATTERN, AbsenceProof


class AbsenceProofFields(forms.Form):
    """How a platform proves absence: asked at registration and when it changes."""

    absence_proof = forms.ChoiceField(
        required=False,
        label="Proof of absence",
        choices=AbsenceProof.choices,
        initial=AbsenceProof.NONE,
        help_text="What the platform guarantees a negative answer of its lookup means. "
        "Without a proof, every outcome a read cannot confirm goes to a person.",
    )
    lookup_template = forms.CharField(
        required=False,
        max_length=2000,
        label="Lookup by key",
        help_text=f"Path and query under the base URL, with {KEY_PLACEHOLDER}, e.g. "
        f"articles?key={KEY_PLACEHOLDER}. Only this lookup can prove absence.",
    )
    key_retention_seconds = forms.IntegerField(
        required=False,
        min_value=1,
        label="Key retention (seconds)",
        help_text="How long the platform remembers an idempotency key. Past it, not "
        "finding the key proves nothing and a person decides.",
    )
    consistency_delay_seconds = forms.IntegerField(
        required=False,
        min_value=0,
        initial=0,
        label="Consistency delay (seconds)",
        help_text="How long after submission the platform may not show a write yet: an "
        "earlier negative answer is read again after it.",
    )

    # Shown together on the page, under one legend.
    ABSENCE_FIELDS = (
        "absence_proof",
        "lookup_template",
        "key_retention_seconds",
        "consistency_delay_seconds",
    )

    def absence_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in self.ABSENCE_FIELDS]

    def clean_absence_proof(self) -> str:
        return self.cleaned_data.get("absence_proof") or AbsenceProof.NONE

    def clean_consistency_delay_seconds(self) -> int:
        return self.cleaned_data.get("consistency_delay_seconds") or 0


class PlatformRegisterForm(AbsenceProofFields):
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


class PlatformAbsenceProofForm(AbsenceProofFields):
    platform = forms.ChoiceField(help_text="The registered platform whose proof changes.")

    def __init__(self, *args: Any, platforms: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        platform = self.fields["platform"]
        assert isinstance(platform, forms.ChoiceField)
        platform.choices = [(name, name) for name in platforms]


class VerifierControlsForm(forms.Form):
    platform = forms.ChoiceField(help_text="The registered platform whose verifier is checked.")
    known_absent_key = forms.CharField(
        max_length=255,
        label="Known-absent key",
        help_text="A key the platform never saw: its lookup must answer absent.",
    )
    known_present_key = forms.CharField(
        max_length=255,
        required=False,
        label="Known-present key",
        help_text="A key the platform holds: its lookup must find it. Without it, a verifier "
        "answering absent for everything goes unnoticed.",
    )

    def __init__(self, *args: Any, platforms: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        platform = self.fields["platform"]
        assert isinstance(platform, forms.ChoiceField)
        platform.choices = [(name, name) for name in platforms]


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
    approval_required = forms.BooleanField(
        required=False,
        label="Require a person's approval",
        help_text="Each receipt waits for another person to approve its intent before the "
        "agent may submit it.",
    )
    compensate_on_failure = forms.BooleanField(
        required=False,
        label="Compensate on failure",
        help_text="When an effect fails and its compensation is planned, recovery tells the "
        "agent to run the compensation instead of escalating.",
    )

    def __init__(self, *args: Any, platforms: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        platform = self.fields["platform"]
        assert isinstance(platform, forms.ChoiceField)
        platform.choices = [(name, name) for name in platforms]

    def clean_evidence_fields(self) -> list[str]:
        raw = self.cleaned_data.get("evidence_fields") or ""
        return [name.strip() for name in raw.split(",") if name.strip()]
