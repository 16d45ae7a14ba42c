"""Filters of the API's lists, and a backend that refuses query parameters it does not know.

django-filter ignores unknown parameters, so `?stauts=approved` would silently return every
task; a pipeline would then train on the wrong set. Here it is a 400 naming the parameter.
"""

from __future__ import annotations

import datetime

import django_filters
from django import forms
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema_field
from rest_framework.exceptions import NotFound, ValidationError

from curation import access
from curation.api.params import MAX_ID, int_schema
from curation.models import Evaluation, Finding, Release, Repository, Task
from workers.models import Job


class StrictFilterBackend(DjangoFilterBackend):
    """Strict on views that declare their parameters (a filterset, `extra_query_params`);
    a view that reads its own query parameters by hand is left to check them itself."""

    def filter_queryset(self, request, queryset, view):
        filterset_class = self.get_filterset_class(view, queryset)
        if filterset_class is None and not hasattr(view, "extra_query_params"):
            return super().filter_queryset(request, queryset, view)
        allowed = set(getattr(view, "extra_query_params", ()))
        paginator = getattr(view, "paginator", None)
        for name in ("cursor_query_param", "page_size_query_param", "page_query_param"):
            if paginator is not None and getattr(paginator, name, None):
                allowed.add(getattr(paginator, name))
        for backend in getattr(view, "filter_backends", ()):
            for name in ("search_param", "ordering_param"):
                if getattr(backend, name, None):
                    allowed.add(getattr(backend, name))
        if filterset_class is not None:
            allowed |= set(filterset_class.base_filters)
        unknown = sorted(set(request.query_params) - allowed)
        if unknown:
            raise ValidationError(
                {
                    "unknown_parameters": unknown,
                    "allowed_parameters": sorted(allowed),
                }
            )
        multiple = {
            name
            for name, filter_ in (filterset_class.base_filters if filterset_class else {}).items()
            if isinstance(filter_, django_filters.MultipleChoiceFilter)
        }
        repeated = sorted(
            name
            for name in request.query_params
            if name not in multiple and len(request.query_params.getlist(name)) > 1
        )
        if repeated:
            # `?status=a&status=b` means either; any other parameter twice is a mistake that
            # "the last one wins" would hide.
            raise ValidationError({name: ["Give this parameter once."] for name in repeated})
        if filterset_class is not None:
            # django-filter skips a filter given an empty value; for anything but free text
            # (`?status=`, `?created_after=`) that hides a client's mistake, so it is refused.
            empty = sorted(
                name
                for name, filter_ in filterset_class.base_filters.items()
                if not isinstance(filter_, django_filters.CharFilter)
                and any(value == "" for value in request.query_params.getlist(name))
            )
            if empty:
                raise ValidationError(
                    {name: ["Give a value, or leave the parameter out."] for name in empty}
                )
        return super().filter_queryset(request, queryset, view)


class VisibleDatasetFilter(django_filters.CharFilter):
    """`?dataset=<name>`: a dataset you cannot see (or that does not exist) is a 404, as its
    object URL is, never an empty list that looks like an answer. Every `dataset` parameter of
    the API follows this rule."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault(
            "help_text", "dataset name; one that does not exist or you cannot see is a 404"
        )
        super().__init__(*args, **kwargs)

    def filter(self, qs, value):
        if value in django_filters.constants.EMPTY_VALUES:
            return qs
        request = getattr(self.parent, "request", None)
        user = getattr(request, "user", None)
        if user is None or not access.visible_datasets(user).filter(name=value).exists():
            raise NotFound(f"No dataset named {value!r} that you can see.")
        return super().filter(qs, value)


class _IdField(forms.IntegerField):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("min_value", 0)
        kwargs.setdefault("max_value", MAX_ID)
        super().__init__(*args, **kwargs)


@extend_schema_field(int_schema())
class IntegerFilter(django_filters.NumberFilter):
    """An id or a revision: a whole number from 0 to the largest id, never 0.5."""

    field_class = _IdField


class _UtcDateTimeField(django_filters.fields.IsoDateTimeField):
    def to_python(self, value):
        moment = super().to_python(value)
        if moment is None:
            return None
        # ISO 8601 allows offsets PostgreSQL refuses (beyond ±15:59); in UTC every database
        # takes it, and a moment too close to year 1 or 9999 to convert is bad input.
        try:
            return moment.astimezone(datetime.UTC)
        except (OverflowError, ValueError):
            raise forms.ValidationError("This moment is out of range.") from None


class UtcDateTimeFilter(django_filters.IsoDateTimeFilter):
    field_class = _UtcDateTimeField


class _StrictBooleanField(forms.Field):
    def to_python(self, value):
        if value in (None, ""):
            return None
        lowered = str(value).strip().lower()
        if lowered in {"true", "1"}:
            return True
        if lowered in {"false", "0"}:
            return False
        raise forms.ValidationError("Expected true or false.")


class BooleanFilter(django_filters.BooleanFilter):
    """true/false (or 1/0); django-filter's own reads anything else, "null" too, as no filter."""

    field_class = _StrictBooleanField


class TaskFilter(django_filters.FilterSet):
    dataset = VisibleDatasetFilter(field_name="dataset__name")
    repository = django_filters.CharFilter(
        field_name="repository__name", help_text="repository name"
    )
    status = django_filters.MultipleChoiceFilter(choices=Task.Status.choices)
    origin = django_filters.MultipleChoiceFilter(choices=Task.Origin.choices)
    difficulty = django_filters.MultipleChoiceFilter(choices=Task.Difficulty.choices)
    instance_id = django_filters.CharFilter()
    created_after = UtcDateTimeFilter(field_name="created_at", lookup_expr="gte")
    updated_after = UtcDateTimeFilter(field_name="updated_at", lookup_expr="gte")

    class Meta:
        model = Task
        fields = [
            "dataset",
            "repository",
            "status",
            "origin",
            "difficulty",
            "instance_id",
            "created_after",
            "updated_after",
        ]


class RepositoryFilter(django_filters.FilterSet):
    language = django_filters.CharFilter()
    status = django_filters.ChoiceFilter(choices=Repository.Status.choices)

    class Meta:
        model = Repository
        fields = ["name", "language", "status"]


class EvaluationFilter(django_filters.FilterSet):
    task = IntegerFilter(field_name="trajectory__task_id")
    dataset = VisibleDatasetFilter(field_name="trajectory__task__dataset__name")
    model = django_filters.CharFilter(field_name="trajectory__model_name")
    resolved = django_filters.ChoiceFilter(
        choices=[("full", "full"), ("partial", "partial"), ("none", "none")]
    )
    trajectory = IntegerFilter(field_name="trajectory_id")

    class Meta:
        model = Evaluation
        fields = ["task", "dataset", "model", "resolved", "trajectory"]


class FindingFilter(django_filters.FilterSet):
    task = IntegerFilter(field_name="task_id")
    dataset = VisibleDatasetFilter(field_name="task__dataset__name")
    kind = django_filters.MultipleChoiceFilter(choices=Finding.Kind.choices)
    severity = django_filters.MultipleChoiceFilter(choices=Finding.Severity.choices)
    trajectory = IntegerFilter(field_name="trajectory_id")
    dismissed = BooleanFilter()
    superseded = BooleanFilter(help_text="Earlier sets replaced by a later audit (default: false).")

    class Meta:
        model = Finding
        fields = [
            "task",
            "dataset",
            "kind",
            "severity",
            "source",
            "dismissed",
            "superseded",
            "trajectory",
        ]


class ReleaseFilter(django_filters.FilterSet):
    dataset = VisibleDatasetFilter(field_name="dataset__name")
    status = django_filters.ChoiceFilter(choices=Release.Status.choices)

    class Meta:
        model = Release
        fields = ["dataset", "status", "version"]


class JobFilter(django_filters.FilterSet):
    status = django_filters.MultipleChoiceFilter(choices=Job.Status.choices)

    class Meta:
        model = Job
        fields = ["kind", "status"]
