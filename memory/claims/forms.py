"""The memory desk's forms."""

from __future__ import annotations

from django import forms


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
