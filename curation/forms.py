"""Forms of the curation pages (API tokens, cutting a release)."""

from __future__ import annotations

import shlex

from django import forms

from curation import access
from curation.models import ApiToken


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="What uses it, e.g. 'training-pipeline'.")
    scopes = forms.MultipleChoiceField(
        choices=ApiToken.Scope.choices,
        widget=forms.CheckboxSelectMultiple,
        initial=[ApiToken.Scope.READ],
        help_text="write, release and grade include read; release needs the curator role; "
        "grade sends patches to be graded (POST /api/v1/grades).",
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
    """A curator's environment recipe (workers.recipes.Recipe), one field per part."""

    install = forms.CharField(
        required=False,
        max_length=200,
        label="Install the project",
        help_text="'.' (the project), '.[test,dev]' (with extras), blank: not installed.",
    )
    packages = forms.CharField(
        required=False,
        max_length=20_000,
        label="Packages",
        widget=forms.Textarea(attrs={"rows": 4, "placeholder": "freezegun\npytest-mock>=3"}),
        help_text="One requirement per line, fetched by name from the package index.",
    )
    environment = forms.CharField(
        required=False,
        max_length=20_000,
        label="Environment variables",
        widget=forms.Textarea(
            attrs={"rows": 2, "placeholder": "SETUPTOOLS_SCM_PRETEND_VERSION=1.0"}
        ),
        help_text="NAME=value per line, for the build and the test runs.",
    )
    setup_commands = forms.CharField(
        required=False,
        max_length=20_000,
        label="Setup commands",
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Shell commands run after the install, one per line: jailed, offline.",
    )
    keep_addopts = forms.BooleanField(
        required=False, label="Use the repository's own pytest addopts"
    )
    pytest_addopts = forms.CharField(
        required=False,
        max_length=2000,
        label="pytest addopts (replaces the repository's)",
    )
    pytest_options = forms.CharField(required=False, max_length=2000, label="Extra pytest options")
    revision = forms.IntegerField(min_value=1, widget=forms.HiddenInput)

    @staticmethod
    def initial_of(row) -> dict:
        recipe = row.recipe or {}
        return {
            "install": recipe.get("install", "."),
            "packages": "\n".join(recipe.get("packages", [])),
            "environment": "\n".join(
                f"{name}={value}" for name, value in (recipe.get("environment") or {}).items()
            ),
            "setup_commands": "\n".join(recipe.get("setup_commands", [])),
            "keep_addopts": recipe.get("pytest_addopts") is None,
            "pytest_addopts": recipe.get("pytest_addopts") or "",
            "pytest_options": shlex.join(recipe.get("pytest_options", [])),
            "revision": row.revision,
        }

    def recipe_data(self) -> dict:
        """The recipe as workers.recipes.Recipe.from_dict takes it (which validates it)."""
        data = self.cleaned_data
        environment = {}
        for line in data["environment"].splitlines():
            if line.strip():
                name, separator, value = line.strip().partition("=")
                if not separator:
                    raise forms.ValidationError(f"environment: {line.strip()!r} is not NAME=value")
                environment[name.strip()] = value
        try:
            options = shlex.split(data["pytest_options"])
        except ValueError as exc:
            raise forms.ValidationError(f"pytest options: {exc}") from None
        return {
            "install": data["install"].strip(),
            "packages": _lines(data["packages"]),
            "environment": environment,
            "setup_commands": _lines(data["setup_commands"]),
            "pytest_addopts": None if data["keep_addopts"] else data["pytest_addopts"],
            "pytest_options": options,
        }


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


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
