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


# --- the curator's pipeline pages ---------------------------------------------------------------

COMMIT_HELP = "Blank: the default branch. A commit id, branch or tag."
NAME_HELP = "Blank: from the source."


class _ImportOptions(forms.Form):
    commit = forms.CharField(max_length=200, required=False, help_text=COMMIT_HELP)
    name = forms.CharField(max_length=100, required=False, help_text=NAME_HELP)
    setup_command = forms.CharField(
        max_length=500,
        required=False,
        help_text="Blank: inferred (pip install . for an installable project).",
    )


class GitImportForm(_ImportOptions):
    url = forms.CharField(
        max_length=2000,
        label="Git URL",
        widget=forms.TextInput(attrs={"placeholder": "https://github.com/owner/project.git"}),
    )


class PathImportForm(_ImportOptions):
    path = forms.CharField(
        max_length=4000,
        label="Folder or archive on the server",
        widget=forms.TextInput(attrs={"placeholder": "/srv/corpora/project"}),
    )


class ArchiveImportForm(_ImportOptions):
    archive = forms.FileField(label="Archive (.tar.gz, .tgz, .tar, .zip)")


class BatchImportForm(forms.Form):
    lines = forms.CharField(
        label="Many at once",
        max_length=200_000,
        widget=forms.Textarea(
            attrs={"rows": 4, "placeholder": "https://github.com/owner/a.git v1.2\n/srv/corpora/b"}
        ),
        help_text="One git URL or server path per line, optionally followed by a commit.",
    )


class RecipeForm(forms.Form):
    setup_command = forms.CharField(max_length=500, required=False, label="Setup command")
    test_command = forms.CharField(max_length=500, required=False, label="Test command")
    requirements = forms.CharField(
        required=False,
        max_length=20_000,
        label="Extra requirements",
        widget=forms.Textarea(attrs={"rows": 4, "placeholder": "pytest-cov\nfreezegun"}),
        help_text="One package per line, installed besides the project.",
    )


class SynthesizeForm(forms.Form):
    repository = forms.ModelChoiceField(queryset=None, to_field_name="name")
    dataset = forms.ModelChoiceField(queryset=None, to_field_name="name")
    engine = forms.ChoiceField(
        choices=[("procedural", "procedural (no model needed)"), ("llm", "llm")]
    )
    count = forms.IntegerField(min_value=1, max_value=200, initial=3, label="Tasks")
    seed = forms.IntegerField(min_value=0, max_value=2**31 - 1, initial=0)

    def __init__(self, *args, repositories, datasets, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["repository"].queryset = repositories
        self.fields["dataset"].queryset = datasets


class DatasetPolicyForm(forms.Form):
    description = forms.CharField(
        required=False,
        max_length=10_000,
        widget=forms.Textarea(attrs={"rows": 2, "class": "prose"}),
    )
    reviews_required = forms.IntegerField(
        min_value=1, max_value=10, initial=1, label="Reviews per task"
    )
    consensus = forms.ChoiceField(choices=[("unanimous", "unanimous"), ("majority", "majority")])
    validation_reruns = forms.IntegerField(
        min_value=1, max_value=20, initial=3, help_text="Runs of each test when validating."
    )


class DatasetCreateForm(DatasetPolicyForm):
    name = forms.SlugField(max_length=100, help_text="Lower-case letters, digits, - and _.")
    field_order = ["name", "description", "reviews_required", "consensus", "validation_reruns"]


class MemberAddForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(required=False)

    def __init__(self, *args, roles, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["role"].choices = [("", "keep their role")] + [
            (role, f"make them {role}") for role in roles
        ]


class TrajectoryUploadForm(forms.Form):
    file = forms.FileField(label="File (JSON or JSONL)")
    dataset = forms.ModelChoiceField(
        queryset=None,
        to_field_name="name",
        required=False,
        help_text="Records are matched to its tasks by instance id.",
    )
    task = forms.CharField(
        max_length=200,
        required=False,
        help_text="Or attach every record to one task: its instance id or number.",
    )
    model = forms.CharField(
        max_length=200, required=False, help_text="For records that name no model."
    )
    format = forms.ChoiceField(choices=[])
    evaluate = forms.BooleanField(
        required=False, initial=True, help_text="Run each patch against the task's tests."
    )

    def __init__(self, *args, datasets, formats, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["dataset"].queryset = datasets
        self.fields["format"].choices = [("auto", "detect it")] + [(f, f) for f in formats]

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("dataset") and cleaned.get("task"):
            raise forms.ValidationError("Choose a dataset or a task, not both.")
        return cleaned
