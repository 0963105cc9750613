"""Console forms. They validate input only; the services decide what is allowed."""

from __future__ import annotations

from typing import Any

from django import forms

from skills.models import SLUG_PATTERN

# The lifecycle action a console form performs, keyed by the status it leads to.
ACTIONS = {
    "in_review": "submit",
    "approved": "approve",
    "rejected": "reject",
    "published": "publish",
    "deprecated": "deprecate",
    "revoked": "revoke",
}
CONFIRMATIONS = {
    "submit": "Send this version to the skill_publication review queue.",
    "approve": "I read the manifest, files, capability changes and evaluation matrix.",
    "reject": "Reject this version for good; a fix needs a new upload.",
    "publish": "Make this version production for every agent that loads the label.",
    "deprecate": "Every load of this version will carry a deprecation warning.",
    "revoke": "Refuse every load of this version from now on, pinned or not. This is final.",
}


class SkillCreateForm(forms.Form):
    slug = forms.RegexField(
        regex=SLUG_PATTERN,
        max_length=64,
        help_text="Lowercase letters, digits and hyphens; SKILL.md's `name` must match it.",
        error_messages={"invalid": "Use lowercase letters, digits and single hyphens."},
    )
    name = forms.CharField(max_length=200, required=False)


class UploadForm(forms.Form):
    package = forms.FileField(help_text="A zip with SKILL.md at its root.")


class ActionForm(forms.Form):
    """A lifecycle action: a reason for the history and an explicit confirmation."""

    reason = forms.CharField(
        max_length=1000,
        widget=forms.Textarea(attrs={"rows": 2}),
        error_messages={"required": "Say why; the reason is kept in the history."},
    )
    confirm = forms.BooleanField(
        error_messages={"required": "Tick the box to confirm."},
    )

    def __init__(self, *args: Any, action: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.action = action
        self.fields["confirm"].label = CONFIRMATIONS[action]
        if action == "submit":
            # Submitting asks for review; the reviewers give the reasons.
            self.fields["reason"].required = False


class RollbackForm(forms.Form):
    to = forms.TypedChoiceField(coerce=int, label="Move production to")
    reason = forms.CharField(
        max_length=1000,
        widget=forms.Textarea(attrs={"rows": 2}),
        error_messages={"required": "Say why you roll back; the reason is kept in the history."},
    )
    confirm = forms.BooleanField(
        label="Move production now; agents resolving the label get this version at once.",
        error_messages={"required": "Tick the box to confirm."},
    )

    def __init__(self, *args: Any, targets: list[int], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        to = self.fields["to"]
        assert isinstance(to, forms.ChoiceField)
        to.choices = [(number, f"v{number}") for number in targets]


class CompareForm(forms.Form):
    a = forms.IntegerField(min_value=1, label="From")
    b = forms.IntegerField(min_value=1, label="To")


class DraftForm(forms.Form):
    """Experiences an editor picks to draft a skill from; the service checks each one."""

    slug = forms.RegexField(
        SLUG_PATTERN,
        max_length=64,
        label="Skill slug",
        help_text="An existing skill gets a new draft version; a new slug creates the skill.",
    )
    name = forms.CharField(max_length=200, required=False, label="Skill name")
    description = forms.CharField(
        max_length=1024,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="What the skill does and when an agent should use it.",
    )
    claims = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple,
        label="Successful runs",
        error_messages={"required": "Pick the runs the procedure comes from."},
    )

    def __init__(self, *args: Any, choices: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        claims = self.fields["claims"]
        assert isinstance(claims, forms.MultipleChoiceField)
        claims.choices = choices


class RetireToolForm(forms.Form):
    name = forms.RegexField(
        r"^[A-Za-z0-9_.:-]{1,100}$",
        label="Tool",
        error_messages={"invalid": "A tool name is letters, digits, _, ., : or -."},
    )
    reason = forms.CharField(
        max_length=1000,
        widget=forms.Textarea(attrs={"rows": 2}),
        error_messages={"required": "Say why the tool is gone; the reason is kept."},
    )
    confirm = forms.BooleanField(
        label="Mark every version needing this tool incompatible; production falls back.",
        error_messages={"required": "Tick the box to confirm."},
    )
