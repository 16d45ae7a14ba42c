"""Forms of the reviewer's workspace. They check input; services decide what it means."""

from __future__ import annotations

from django import forms

from curation.models import Specification, Task
from review.models import Comment, Review

SEVERITY = [(0, "0"), (1, "1"), (2, "2"), (3, "3")]

RUBRIC_HELP = {
    "spec_clarity": [
        "every requirement is stated and unambiguous",
        "small gaps with one sensible reading",
        "several readings; a solver must guess",
        "cannot be solved without seeing the tests",
    ],
    "test_validity": [
        "any correct solution passes",
        "unusual correct solutions might fail",
        "reasonable correct solutions fail, or wrong ones pass",
        "tests check something other than the specs",
    ],
    "interdependency": [
        "the specs constrain each other and the tests prove it",
        "coupling is real but thin",
        "specs are independent pieces bundled together",
        "a single requirement dressed up as several",
    ],
}


class DecisionForm(forms.Form):
    decision = forms.ChoiceField(
        choices=Review.Decision.choices,
        error_messages={"required": "Choose approve, request changes or reject."},
    )
    spec_clarity = forms.TypedChoiceField(
        choices=SEVERITY, coerce=int, error_messages={"required": "Rate spec clarity (0 to 3)."}
    )
    test_validity = forms.TypedChoiceField(
        choices=SEVERITY, coerce=int, error_messages={"required": "Rate test validity (0 to 3)."}
    )
    interdependency = forms.TypedChoiceField(
        choices=SEVERITY, coerce=int, error_messages={"required": "Rate interdependency (0 to 3)."}
    )
    difficulty = forms.ChoiceField(
        choices=Task.Difficulty.choices,
        error_messages={"required": "Choose a difficulty bucket."},
    )
    comment = forms.CharField(required=False, max_length=20_000)
    revision = forms.IntegerField(min_value=1)

    def clean(self):
        data = super().clean()
        decision = data.get("decision")
        worst = max(
            (data.get(k, 0) or 0 for k in ("spec_clarity", "test_validity", "interdependency")),
            default=0,
        )
        # REVIEW.md: a severity of 2 or more means "do not approve as is".
        if decision == Review.Decision.APPROVE and worst >= 2:
            raise forms.ValidationError(
                "A rubric severity of 2 or more means the task cannot be approved as is: "
                "request changes or reject it."
            )
        if (
            decision in (Review.Decision.REQUEST_CHANGES, Review.Decision.REJECT)
            and not (data.get("comment") or "").strip()
        ):
            self.add_error("comment", "Say what is wrong, so the author can act on it.")
        return data


class CommentForm(forms.Form):
    body = forms.CharField(max_length=20_000, error_messages={"required": "Write a comment."})
    anchor = forms.ChoiceField(choices=Comment.Anchor.choices, initial=Comment.Anchor.TASK)
    spec = forms.CharField(required=False, max_length=16)
    test = forms.IntegerField(required=False, min_value=1)
    patch = forms.ChoiceField(
        required=False, choices=[("", ""), ("reference", "reference"), ("test", "test")]
    )
    file_path = forms.CharField(required=False, max_length=500)
    line = forms.IntegerField(required=False, min_value=1)


class StatementForm(forms.Form):
    title = forms.CharField(max_length=300)
    problem_statement = forms.CharField(required=False, widget=forms.Textarea)
    revision = forms.IntegerField(min_value=1)


class SpecForm(forms.Form):
    statement = forms.CharField(widget=forms.Textarea)
    kind = forms.ChoiceField(choices=Specification.Kind.choices)
    rationale = forms.CharField(required=False, widget=forms.Textarea)
    depends_on = forms.MultipleChoiceField(required=False, choices=[])
    revision = forms.IntegerField(min_value=1)

    def __init__(self, *args, spec_keys: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["depends_on"].choices = [(k, k) for k in spec_keys]


class TestCodeForm(forms.Form):
    code = forms.CharField(required=False, widget=forms.Textarea)
    specs = forms.MultipleChoiceField(required=False, choices=[])
    revision = forms.IntegerField(min_value=1)

    def __init__(self, *args, spec_keys: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["specs"].choices = [(k, k) for k in spec_keys]


class PatchForm(forms.Form):
    patch = forms.CharField(required=False, widget=forms.Textarea)
    revision = forms.IntegerField(min_value=1)
