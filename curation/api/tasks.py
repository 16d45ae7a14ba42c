"""Tasks with their specs, dependency graph and tests; creation; and the streaming export."""

from __future__ import annotations

from django.db.models import Prefetch
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response

from curation import access
from curation.api.errors import error_body
from curation.api.filters import TaskFilter
from curation.api.params import JSONInputSerializer, bool_param, exploded_object, query_param
from curation.api.parsers import JSONParser
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
from curation.services.editing import EditNotAllowed, StaleRevision, task_update_content
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


class DifficultyField(serializers.ChoiceField):
    """A task's difficulty bucket, or null while nobody has rated it (stored as "")."""

    def __init__(self, **kwargs):
        super().__init__(choices=Task.Difficulty.choices, allow_null=True, **kwargs)

    def to_representation(self, value):
        return value or None


class TaskSerializer(serializers.ModelSerializer):
    difficulty = DifficultyField(read_only=True)
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


def Text(**kwargs) -> serializers.CharField:
    """Text taken as sent: DRF would strip it first, so that a statement of one space or a
    carriage return, valid by the schema (minLength 1), were refused as blank."""
    return serializers.CharField(trim_whitespace=False, **kwargs)


class SpecInputSerializer(JSONInputSerializer):
    key = Text(max_length=16)
    kind = serializers.ChoiceField(choices=Specification.Kind.choices)
    statement = Text()
    rationale = Text(required=False, allow_blank=True, default="")
    part = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=500,
        help_text="the reference part it is about, `path::Qualified.name` (optional)",
    )


class DependencyInputSerializer(JSONInputSerializer):
    vars()["from"] = Text(max_length=16, help_text="key of the dependent spec")
    vars()["to"] = Text(max_length=16, help_text="key of the spec it needs")
    relation = Text(max_length=32, required=False, default="depends-on")
    detail = Text(required=False, allow_blank=True, default="")


class TestInputSerializer(JSONInputSerializer):
    nodeid = Text(max_length=2000)
    intended_role = serializers.ChoiceField(choices=TestCase.Intent.choices)
    specs = serializers.ListField(child=Text(max_length=16), required=False, default=list)
    code = Text(required=False, allow_blank=True, default="")


class TaskEditSerializer(JSONInputSerializer):
    """A content edit: the revision you read, and what changes (curation.services.editing)."""

    revision = serializers.IntegerField(
        min_value=1, help_text="the revision you edited; 409 if the task moved on"
    )
    title = serializers.CharField(required=False, max_length=300)
    problem_statement = serializers.CharField(
        required=False, allow_blank=True, trim_whitespace=False
    )
    reference_patch = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    test_patch = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    specs = serializers.DictField(
        required=False,
        child=serializers.DictField(),
        help_text='{"S1": {"statement", "kind", "rationale", "depends_on": ["S2"]}}',
    )
    tests = serializers.DictField(
        required=False,
        child=serializers.DictField(),
        help_text='{"<node id>": {"code": "def test_...", "specs": ["S1"]}}: code is written '
        "into the test patch",
    )


class TaskCreateSerializer(JSONInputSerializer):
    dataset = Text(max_length=100, help_text="dataset name; one you cannot see is a 404")
    repository = Text(max_length=100, help_text="repository name; an unknown one is a 404")
    title = Text(max_length=300)
    # Blank or oversized statements get the service's message (one rule for every path).
    problem_statement = Text(allow_blank=True)
    base_commit = Text(max_length=40, required=False, allow_blank=True)
    reference_patch = Text()
    test_patch = Text(required=False, allow_blank=True, default="")
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
    OpenApiParameter(
        "trajectory_options",
        exploded_object(
            {"trajectories": {"type": "boolean"}, "include_unsafe": {"type": "boolean"}},
            # include_unsafe=true only together with trajectories=true.
            anyOf=[
                {"not": {"required": ["include_unsafe"]}},
                {"properties": {"include_unsafe": {"enum": [False]}}},
                {"required": ["trajectories"], "properties": {"trajectories": {"enum": [True]}}},
            ],
        ),
        style="form",
        explode=True,
        description=(
            "`trajectories` (with trajectories and their evaluations; specloom format only) "
            "and `include_unsafe` (keep trajectories flagged unsafe too), each a query "
            "parameter of its own; `include_unsafe=true` only with `trajectories=true`."
        ),
    ),
]


class TaskViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    """Tasks of the datasets you can see, with specs, their dependency graph and tests."""

    serializer_class = TaskSerializer
    filterset_class = TaskFilter
    # A task is nested lists of specs and tests: JSON only (a form cannot carry it).
    parser_classes = [JSONParser]

    def required_role(self, request):
        return access.CURATOR if request.method in ("POST", "PATCH") else None

    @property
    def extra_query_params(self):
        return ("format", "trajectories", "include_unsafe") if self.action == "export" else ()

    def get_queryset(self):
        visible = access.visible_tasks(self.request.user)
        if self.action == "export":
            return visible.order_by("id")
        return task_queryset().filter(pk__in=visible.values("pk")).order_by("id")

    def get_serializer_class(self):
        return {"create": TaskCreateSerializer, "partial_update": TaskEditSerializer}.get(
            self.action, TaskSerializer
        )

    @extend_schema(
        request=TaskEditSerializer,
        responses={200: TaskSerializer, 409: OpenApiResponse(description="stale revision")},
    )
    def partial_update(self, request, *args, **kwargs):
        """Edit a task's content as a new revision and revalidate it (curators)."""
        task = self.get_object()
        data = TaskEditSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        revision = values.pop("revision")
        try:
            task_update_content(
                task=task, user=request.user, expected_revision=revision, changes=values
            )
        except StaleRevision as stale:
            # What the other person changed travels with the refusal, as in the web editor.
            return Response(error_body(409, str(stale), stale.as_dict()), status=409)
        except (TaskInputError, EditNotAllowed) as exc:
            raise ValidationError({"non_field_errors": [str(exc)]}) from None
        return Response(TaskSerializer(task_queryset().get(pk=task.pk)).data)

    @extend_schema(request=TaskCreateSerializer, responses={201: TaskSerializer})
    def create(self, request, *args, **kwargs):
        data = TaskCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        dataset = access.visible_datasets(request.user).filter(name=values["dataset"]).first()
        if dataset is None:
            raise NotFound(f"No dataset named {values['dataset']!r} that you can see.")
        repository = Repository.objects.filter(name=values["repository"]).first()
        if repository is None:
            raise NotFound(f"No repository named {values['repository']!r}.")
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
        fmt = query_param(request, "format", "specloom")
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
            trajectories=bool_param(request, "trajectories", False),
            include_unsafe=bool_param(request, "include_unsafe", False),
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
