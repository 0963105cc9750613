"""Console forms for the admin pages of accounts. They validate input; the services decide."""

from __future__ import annotations

from django import forms

from accounts.models import AuthorityCeiling, Capability, Membership, Tenant
from accounts.selectors import token_owner_choices

SUBJECT_KEY_MAX = 255


class OwnerChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: Membership) -> str:
        return f"{obj.user.get_username()} ({obj.role})"


class AgentTokenCreateForm(forms.Form):
    owner = OwnerChoiceField(
        queryset=Membership.objects.none(),
        required=False,
        label="Acts for",
        empty_label="Me",
        help_text="The person who answers for what the agent does. Two tokens of one person "
        "are that one person: neither can review or evaluate the other's work.",
    )
    name = forms.RegexField(
        regex=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$",
        max_length=100,
        help_text="Letters, digits, dots, dashes and underscores; unique in this tenant.",
        error_messages={"invalid": "Use letters, digits, dots, dashes and underscores."},
    )
    capabilities = forms.MultipleChoiceField(
        # Shown as the API spells them, the way agents' docs and errors name them.
        choices=[(value, value) for value in Capability.values],
        widget=forms.CheckboxSelectMultiple,
        help_text="Give only what the agent needs. receipts:operate reaches every agent's "
        "receipts and checkpoints, not only the token's own.",
        error_messages={"required": "Choose at least one capability."},
    )
    subjects = forms.CharField(
        required=False,
        label="Allowed subjects",
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "user:alice\nproject:crm"}),
        help_text="One kind:ref per line. Empty means every subject of the tenant.",
    )
    max_authority = forms.ChoiceField(
        choices=[(value, value) for value in AuthorityCeiling.values],
        initial=AuthorityCeiling.AGENT_INFERRED,
        widget=forms.RadioSelect,
        label="Authority ceiling",
        help_text="The strongest authority this token's claims may carry. user_explicit is for "
        "front-ends that talk to the user; tool_verified for agents that cite tool results.",
    )

    def __init__(self, *args: object, tenant: Tenant, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        owner_field = self.fields["owner"]
        assert isinstance(owner_field, OwnerChoiceField)
        owner_field.queryset = token_owner_choices(tenant=tenant)

    def clean_subjects(self) -> list[str]:
        keys = []
        for line in self.cleaned_data["subjects"].replace(",", "\n").splitlines():
            key = line.strip()
            if not key:
                continue
            kind, sep, ref = key.partition(":")
            if not sep or not kind or not ref or len(key) > SUBJECT_KEY_MAX:
                raise forms.ValidationError(f"{key!r} is not a subject; write kind:ref.")
            keys.append(key)
        return sorted(set(keys))


class AgentTokenRevokeForm(forms.Form):
    reason = forms.CharField(
        max_length=500,
        strip=True,
        error_messages={"required": "Say why the token is revoked."},
    )
