"""Forms of the curation pages (API tokens, cutting a release)."""

from __future__ import annotations

from django import forms

from curation import access
from curation.models import ApiToken


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="What uses it, e.g. 'training-pipeline'.")
    scopes = forms.MultipleChoiceField(
        choices=ApiToken.Scope.choices,
        widget=forms.CheckboxSelectMultiple,
        initial=[ApiToken.Scope.READ],
        help_text="write and release include read; release needs the curator role.",
    )


class ReleaseCutForm(forms.Form):
    dataset = forms.ModelChoiceField(queryset=None, to_field_name="name")
    version = forms.CharField(max_length=32, required=False, help_text="Blank: the next vN.")
    trajectories = forms.BooleanField(
        required=False, help_text="Put trajectories and their evaluations in the specloom file."
    )
    include_unsafe = forms.BooleanField(
        required=False, help_text="Keep trajectories the review agent flagged unsafe."
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["dataset"].queryset = access.visible_datasets(user).order_by("name")
