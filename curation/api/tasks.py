"""Tasks with their specs, dependency graph and tests; creation; and the streaming export."""

from __future__ import annotations

from django.db.models import Prefetch
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from curation import access
from curation.api.filters import TaskFilter
from curation.api.router import router
from curation.exports.formats import MEDIA_TYPES, STREAMABLE, SUFFIXES, jsonl_chunks
from curation.exports.records import DEFAULT_BATCH, ExportOptions, task_records
from curation.models import (
    Repository,
    SpecDependency,
    Specification,
    Task,
    TestCase,
)
from curation.services.tasks import TaskInputError, task_create


class SpecSerializer(serializers.ModelSerializer):
    class Meta:
        model = Specification
        # `verified`: a FAIL_TO_PASS test verifies it; an unverified spec is never counted.
        fields = ["key", "kind", "statement", "rationale", "part", "verified", "verification_note"]


class DependencySerializer(serializers.ModelSerializer):
    # "from" and "to", as in the exports; `from` is a keyword, hence vars().
    vars()["from"] = serializers.CharField(source="from_spec.key", read_only=True)
    vars()["to"] = serializers.CharField(source="to_spec.key", read_only=True)

    class Meta:
        model = SpecDependency
        fields = ["from", "to", "relation", "evidence", "detail"]


class TestSerializer(serializers.ModelSerializer):
    specs = serializers.SlugRelatedField(slug_field="key", many=True, read_only=True)

    class Meta:
        model = TestCase
        fields = [
            "nodeid",
            "intended_role",
            "role",
            "specs",
            "runs",
            "passes_base",
            "passes_reference",
        ]


class TaskSerializer(serializers.ModelSerializer):
    dataset = serializers.SlugRelatedField(slug_field="name", read_only=True)
    repository = serializers.SlugRelatedField(slug_field="name", read_only=True)
    specs = SpecSerializer(many=True, read_only=True)
    dependencies = DependencySerializer(many=True, read_only=True)
    tests = TestSerializer(many=True, read_only=True)

    class Meta:
        model = Task
        fields = [
            "id",
            "instance_id",
            "dataset",
            "repository",
            "base_commit",
            "title",
            "problem_statement",
            "status",
            "origin",
            "difficulty",
            "difficulty_score",
            "interaction_score",
            "trivial",
            "trivial_included",
            "revision",
            "validated_revision",
            "reference_patch",
            "test_patch",
            "specs",
            "dependencies",
            "tests",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields


def task_queryset():
    """Tasks with everything the serializer reads, in a fixed number of queries."""
    return Task.objects.select_related("dataset", "repository").prefetch_related(
        Prefetch("specs", queryset=Specification.objects.order_by("order", "id")),
        Prefetch(
            "dependencies",
            queryset=SpecDependency.objects.select_related("from_spec", "to_spec"),
        ),
        Prefetch("tests", queryset=TestCase.objects.prefetch_related("specs")),
    )


class SpecInputSerializer(serializers.Serializer):
    key = serializers.CharField(max_length=16)
    kind = serializers.ChoiceField(choices=Specification.Kind.choices)
    statement = serializers.CharField()
    rationale = serializers.CharField(required=False, allow_blank=True, default="")
    part = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=500,
        help_text="the reference part it is about, `path::Qualified.name` (optional)",
    )


class DependencyInputSerializer(serializers.Serializer):
    vars()["from"] = serializers.CharField(max_length=16, help_text="key of the dependent spec")
    vars()["to"] = serializers.CharField(max_length=16, help_text="key of the spec it needs")
    relation = serializers.CharField(max_length=32, required=False, default="depends-on")
    detail = serializers.CharField(required=False, allow_blank=True, default="")


class TestInputSerializer(serializers.Serializer):
    nodeid = serializers.CharField(max_length=2000)
    intended_role = serializers.ChoiceField(choices=TestCase.Intent.choices)
    specs = serializers.ListField(
        child=serializers.CharField(max_length=16), required=False, default=list
    )
    code = serializers.CharField(required=False, allow_blank=True, default="")


class TaskCreateSerializer(serializers.Serializer):
    dataset = serializers.CharField(max_length=100, help_text="dataset name")
    repository = serializers.CharField(max_length=100, help_text="repository name")
    title = serializers.CharField(max_length=300)
    problem_statement = serializers.CharField()
    base_commit = serializers.CharField(max_length=40, required=False, allow_blank=True)
    reference_patch = serializers.CharField()
    test_patch = serializers.CharField(required=False, allow_blank=True, default="")
    difficulty = serializers.ChoiceField(
        choices=Task.Difficulty.choices, required=False, allow_blank=True, default=""
    )
    specs = SpecInputSerializer(many=True, max_length=200)
    dependencies = DependencyInputSerializer(many=True, required=False, max_length=2000)
    tests = TestInputSerializer(many=True, max_length=5000)


# Tasks per database round trip of the streaming export: large enough that the fixed cost of
# the batch's queries is spread thin, small enough that a batch of big patches stays small.
EXPORT_BATCH = DEFAULT_BATCH

_EXPORT_PARAMETERS = [
    OpenApiParameter(
        "format",
        str,
        enum=list(STREAMABLE),
        default="specloom",
        description="specloom (full records) or swebench (SWE-bench instance keys)",
    ),
    OpenApiParameter("trajectories", bool, description="with trajectories (specloom only)"),
    OpenApiParameter("include_unsafe", bool, description="keep unsafe trajectories too"),
]


def _flag(request, name: str) -> bool:
    raw = request.query_params.get(name)
    if raw is None:
        return False
    if raw.strip().lower() in {"1", "true", "yes", "on"}:
        return True
    if raw.strip().lower() in {"0", "false", "no", "off"}:
        return False
    raise ValidationError({name: ["Expected true or false."]})


class TaskViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    """Tasks of the datasets you can see, with specs, their dependency graph and tests."""

    serializer_class = TaskSerializer
    filterset_class = TaskFilter

    def required_role(self, request):
        return access.CURATOR if request.method == "POST" else None

    @property
    def extra_query_params(self):
        return ("format", "trajectories", "include_unsafe") if self.action == "export" else ()

    def get_queryset(self):
        visible = access.visible_tasks(self.request.user)
        if self.action == "export":
            return visible.order_by("id")
        return task_queryset().filter(pk__in=visible.values("pk")).order_by("id")

    def get_serializer_class(self):
        return TaskCreateSerializer if self.action == "create" else TaskSerializer

    @extend_schema(request=TaskCreateSerializer, responses={201: TaskSerializer})
    def create(self, request, *args, **kwargs):
        data = TaskCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        dataset = access.visible_datasets(request.user).filter(name=values["dataset"]).first()
        if dataset is None:
            raise ValidationError({"dataset": [f"No dataset named {values['dataset']!r}."]})
        repository = Repository.objects.filter(name=values["repository"]).first()
        if repository is None:
            raise ValidationError({"repository": [f"No repository {values['repository']!r}."]})
        try:
            task = task_create(
                repository=repository,
                dataset=dataset,
                title=values["title"],
                problem_statement=values["problem_statement"],
                base_commit=values.get("base_commit") or None,
                reference_patch=values["reference_patch"],
                test_patch=values["test_patch"],
                difficulty=values["difficulty"],
                specs=values["specs"],
                dependencies=values.get("dependencies", []),
                tests=values["tests"],
                origin=Task.Origin.MANUAL,
                user=request.user,
            )
        except TaskInputError as exc:
            raise ValidationError({"non_field_errors": [str(exc)]}) from None
        return Response(
            TaskSerializer(task_queryset().get(pk=task.pk)).data, status=status.HTTP_201_CREATED
        )

    def perform_content_negotiation(self, request, force=False):
        # The export answers in JSON Lines whatever the client says it accepts.
        force = force or self.action == "export"
        return super().perform_content_negotiation(request, force=force)

    @extend_schema(
        parameters=_EXPORT_PARAMETERS,
        responses={
            (200, "application/x-ndjson"): OpenApiResponse(
                OpenApiTypes.BINARY, description="One JSON object per line, one line per task."
            )
        },
    )
    @action(detail=False, methods=["get"], pagination_class=None)
    def export(self, request):
        """Stream the filtered tasks as JSON Lines, in constant memory, however many there are."""
        fmt = request.query_params.get("format", "specloom")
        if fmt not in STREAMABLE:
            raise ValidationError(
                {
                    "format": [
                        f"Choose {' or '.join(STREAMABLE)}; parquet is built once per release "
                        "(GET /api/v1/releases/{id}/export?format=parquet)."
                    ]
                }
            )
        options = ExportOptions(
            trajectories=_flag(request, "trajectories"),
            include_unsafe=_flag(request, "include_unsafe"),
            batch_size=EXPORT_BATCH,
        )
        if options.include_unsafe and not options.trajectories:
            raise ValidationError({"include_unsafe": ["Only with trajectories=true."]})
        tasks = self.filter_queryset(self.get_queryset())
        # A HEAD answers with the headers only; a WSGI server could otherwise run the whole
        # export just to throw the body away.
        body = (
            iter(())
            if request.method == "HEAD"
            else jsonl_chunks(task_records(tasks, options=options), fmt)
        )
        response = StreamingHttpResponse(body, content_type=MEDIA_TYPES[fmt])
        response["Content-Disposition"] = f'attachment; filename="tasks{SUFFIXES[fmt]}"'
        response["Cache-Control"] = "no-store"
        return response


router.register("tasks", TaskViewSet, basename="task")
