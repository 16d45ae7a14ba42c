"""Trajectories over the API: bulk import, reading steps page by page, and what the
evaluations and the review agent made of them.

    POST /api/v1/trajectories                 import JSON or JSONL (any supported format)
    GET  /api/v1/trajectories                 list (?task= ?dataset= ?model= ?unsafe=)
    GET  /api/v1/trajectories/{id}            one trajectory with its evaluation
    GET  /api/v1/trajectories/{id}/steps      its steps, cursor-paginated (?from_index=)
    POST /api/v1/trajectories/{id}/evaluate   evaluate it again
    GET  /api/v1/evaluation-matrix?task=      models x specs
    GET  /api/v1/pass-rates?task=|dataset=    pass rates per model and spec kind
    GET  /api/v1/audit-calibration?dataset=   the review agent against human decisions
    GET  /api/v1/audits?task=                 the task's audit runs (LLM audit status too)
    POST /api/v1/audits?task=[&llm=]          queue an audit of the task

The import streams the request body to a temporary file (never holding it in memory) and
parses it as the command-line importer does; the response lists what was created, what was
already there and which records failed, with their line numbers.
"""

from __future__ import annotations

import tempfile

from django.conf import settings
from django.db.models import Prefetch
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, UnsupportedMediaType, ValidationError
from rest_framework.parsers import BaseParser
from rest_framework.response import Response

from curation import access
from curation.api.calibration import CalibrationListSerializer
from curation.api.errors import PayloadTooLarge, error_body
from curation.api.pagination import IdCursorPagination
from curation.api.params import (
    bool_param,
    exploded_object,
    int_param,
    int_schema,
    only_params,
    query_param,
)
from curation.api.router import router
from curation.ingest import FORMATS
from curation.models import Evaluation, SpecResult, Trajectory, TrajectoryStep
from curation.selectors.audit import audit_calibration, findings_hidden, task_audit_runs
from curation.selectors.evaluations import pass_rates_by_kind, resolution_by_model, spec_matrix
from curation.services.audit import task_audit_enqueue
from curation.services.evaluation import trajectory_evaluation_enqueue
from curation.services.trajectories import ImportRefused, trajectories_import_file

IMPORT_MEDIA_TYPES = (
    "application/json",
    "application/x-ndjson",
    "application/jsonl",
    "application/x-jsonlines",
    "application/jsonlines",
)
_CHUNK = 1024 * 1024


class _StreamedBody(BaseParser):
    """Declares the import's content types without reading the body: the view streams it."""

    def parse(self, stream, media_type=None, parser_context=None):
        return {}


def _parser(media: str) -> type[BaseParser]:
    return type(
        f"StreamedBody_{media.replace('/', '_').replace('-', '_')}",
        (_StreamedBody,),
        {"media_type": media},
    )


STREAMED_PARSERS = [_parser(media) for media in IMPORT_MEDIA_TYPES]


class StepCursorPagination(IdCursorPagination):
    ordering = "index"
    page_size = 50


class EvaluationSerializer(serializers.ModelSerializer):
    specs = serializers.SerializerMethodField()

    class Meta:
        model = Evaluation
        fields = [
            "id",
            "task_revision",
            "patch_applied",
            "patch_error",
            "resolved",
            "test_outcomes",
            "touched_test_files",
            "flaky_tests",
            "run_seconds",
            "specs",
            "created_at",
        ]

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_specs(self, evaluation) -> dict[str, bool]:
        return {result.spec.key: result.satisfied for result in evaluation.spec_results.all()}


class TrajectorySerializer(serializers.ModelSerializer):
    instance_id = serializers.CharField(source="task.instance_id", read_only=True)
    cost_usd = serializers.DecimalField(
        max_digits=12, decimal_places=6, coerce_to_string=False, allow_null=True, read_only=True
    )
    evaluation = serializers.SerializerMethodField()

    class Meta:
        model = Trajectory
        fields = [
            "id",
            "task",
            "instance_id",
            "model_name",
            "scaffold",
            "source_format",
            "content_sha256",
            "exit_status",
            "tokens_in",
            "tokens_out",
            "cost_usd",
            "step_count",
            "unsafe",
            "created_at",
            "evaluation",
        ]

    @extend_schema_field(EvaluationSerializer(allow_null=True))
    def get_evaluation(self, trajectory) -> dict | None:
        evaluation = getattr(trajectory, "evaluation", None)
        if evaluation is None:
            return None
        return EvaluationSerializer(evaluation).data


class TrajectoryDetailSerializer(TrajectorySerializer):
    class Meta(TrajectorySerializer.Meta):
        fields = [*TrajectorySerializer.Meta.fields, "final_patch", "metadata"]


class StepSerializer(serializers.ModelSerializer):
    class Meta:
        model = TrajectoryStep
        fields = [*TrajectoryStep.CONTENT_FIELDS, "extra"]


def _task_param(request, *, required: bool = True):
    task_id = int_param(request, "task", required=required)
    if task_id is None:
        return None
    return access.get_task_for_user(request.user, task_id)


def _dataset_param(request):
    name = query_param(request, "dataset")
    if not name:
        return None
    return access.get_dataset_for_user(request.user, name)


def _stream_to_file(request, target) -> int:
    """Copy the request body to `target` in chunks; 413 past the upload limit."""
    limit = settings.SPECLOOM_UPLOAD_MAX_BYTES
    declared = request.META.get("CONTENT_LENGTH") or "0"
    try:
        declared_bytes = int(declared)
    except ValueError:
        raise ValidationError({"body": ["Content-Length is not a number."]}) from None
    if declared_bytes > limit:
        raise PayloadTooLarge(f"The body is {declared_bytes} bytes; the limit is {limit} bytes.")
    raw = request._request  # the Django request: its body has not been read (see _StreamedBody)
    written = 0
    while chunk := raw.read(_CHUNK):
        written += len(chunk)
        if written > limit:
            raise PayloadTooLarge(f"The body is larger than the limit of {limit} bytes.")
        target.write(chunk)
    target.flush()
    return written


IMPORT_PARAMETERS = [
    OpenApiParameter(
        "target",
        exploded_object(
            {"task": int_schema(), "dataset": {"type": "string"}},
            maxProperties=1,
        ),
        style="form",
        explode=True,
        description=(
            "At most one of `task` (attach every record to this task id) or `dataset` (match "
            "records to this dataset's tasks by instance id), each a query parameter of its own; "
            "with neither, records match any task you can see by instance id."
        ),
    ),
    OpenApiParameter(
        "model",
        str,
        description="The model that ran the records; overrides any model a file names.",
    ),
    OpenApiParameter("format", str, enum=["auto", *FORMATS], description="Default: auto."),
    OpenApiParameter("evaluate", bool, description="Queue evaluations (default true)."),
]


class TrajectoryViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Agent trajectories: import, list, read, and their steps page by page."""

    queryset = Trajectory.objects.none()
    serializer_class = TrajectorySerializer

    def get_parsers(self):
        if getattr(self, "action", None) == "create" or self.request is None:
            return [parser() for parser in STREAMED_PARSERS]
        return super().get_parsers()

    def required_role(self, request):
        return access.CURATOR if request.method == "POST" else None

    def get_queryset(self):
        user = self.request.user
        queryset = Trajectory.objects.filter(task__in=access.visible_tasks(user)).select_related(
            "task"
        )
        if self.action in ("list", "retrieve"):
            queryset = queryset.select_related("evaluation").prefetch_related(
                Prefetch(
                    "evaluation__spec_results",
                    queryset=SpecResult.objects.select_related("spec"),
                )
            )
        if self.action == "list":
            if (task_id := int_param(self.request, "task")) is not None:
                queryset = queryset.filter(task_id=task_id)
            if dataset := _dataset_param(self.request):
                queryset = queryset.filter(task__dataset=dataset)
            if model := query_param(self.request, "model"):
                queryset = queryset.filter(model_name=model)
            if "unsafe" in self.request.query_params:
                queryset = queryset.filter(unsafe=bool_param(self.request, "unsafe", False))
        return queryset.order_by("id")

    def get_serializer_class(self):
        if self.action == "retrieve":
            return TrajectoryDetailSerializer
        return TrajectorySerializer

    @extend_schema(
        parameters=[
            OpenApiParameter("task", int_schema()),
            OpenApiParameter("dataset", str),
            OpenApiParameter("model", str),
            OpenApiParameter("unsafe", bool),
        ]
    )
    def list(self, request, *args, **kwargs):
        only_params(request, ("task", "dataset", "model", "unsafe", "cursor", "page_size"))
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request={
            # A JSON document is an object or a list; JSON Lines are text of any shape.
            **{media: OpenApiTypes.BINARY for media in IMPORT_MEDIA_TYPES},
            "application/json": {"oneOf": [{"type": "object"}, {"type": "array"}]},
        },
        parameters=IMPORT_PARAMETERS,
        # 201: something was imported; 200: everything was already there; 400 (the error body,
        # the report in its details): nothing was imported.
        responses={201: OpenApiTypes.OBJECT, 200: OpenApiTypes.OBJECT},
    )
    def create(self, request, *args, **kwargs):
        """Import trajectories (JSON object or list, or JSONL) of any supported format."""
        only_params(request, ("task", "dataset", "model", "format", "evaluate"))
        if request.META.get("CONTENT_LENGTH") in (None, "", "0"):
            raise ValidationError({"body": ["The request body is empty."]})
        media = (request.content_type or "").split(";", 1)[0].strip().lower()
        if media not in IMPORT_MEDIA_TYPES:
            raise UnsupportedMediaType(
                media or "(none)",
                detail=f"Send the file as one of {', '.join(IMPORT_MEDIA_TYPES)}.",
            )
        fmt = query_param(request, "format") or "auto"
        if fmt != "auto" and fmt not in FORMATS:
            raise ValidationError(
                {"format": [f"Unknown format {fmt!r}; expected auto or {', '.join(FORMATS)}."]}
            )
        task = _task_param(request, required=False)
        dataset = _dataset_param(request)
        if task is not None and dataset is not None:
            raise ValidationError({"task": ["Give a task or a dataset, not both."]})
        evaluate = bool_param(request, "evaluate", True)
        with tempfile.NamedTemporaryFile(prefix="specloom-import-", suffix=".json") as body:
            if not _stream_to_file(request, body):
                raise ValidationError({"body": ["The request body is empty."]})
            try:
                report = trajectories_import_file(
                    path=body.name,
                    fmt=fmt,
                    task=task,
                    dataset=dataset,
                    model=query_param(request, "model") or None,
                    user=request.user,
                    evaluate=evaluate,
                    tasks=access.visible_tasks(request.user),
                    name="the upload",
                )
            except ImportRefused as exc:
                raise ValidationError({"body": [str(exc)]}) from None
        if report.created:
            return Response(report.as_dict(), status=status.HTTP_201_CREATED)
        if report.error_count:
            # Nothing imported: an error like any other, with the report as its details.
            message = (
                f"No record was imported: {report.error_count} "
                f"record{'s' if report.error_count != 1 else ''} failed"
                + (f", {len(report.duplicates)} were already there." if report.duplicates else ".")
            )
            return Response(
                error_body(400, message, report.as_dict()),
                status=status.HTTP_400_BAD_REQUEST,
            )
        return Response(report.as_dict(), status=status.HTTP_200_OK)

    @extend_schema(
        parameters=[
            OpenApiParameter("cursor", str),
            OpenApiParameter("page_size", int_schema(minimum=1, maximum=500)),
            OpenApiParameter("from_index", int_schema(), description="Start at this step index."),
        ],
        responses=StepSerializer(many=True),
    )
    @action(detail=True, methods=["get"], url_path="steps")
    def steps(self, request, pk=None):
        only_params(request, ("cursor", "page_size", "from_index"))
        trajectory = self._visible_trajectory(pk)
        steps = TrajectoryStep.objects.filter(trajectory=trajectory)
        if (start := int_param(request, "from_index")) is not None:
            steps = steps.filter(index__gte=start)
        paginator = StepCursorPagination()
        page = paginator.paginate_queryset(steps, request, view=self)
        return paginator.get_paginated_response(StepSerializer(page, many=True).data)

    @extend_schema(request=None, responses={202: OpenApiTypes.OBJECT})
    @action(detail=True, methods=["post"], url_path="evaluate")
    def evaluate(self, request, pk=None):
        trajectory = self._visible_trajectory(pk)
        job = trajectory_evaluation_enqueue(trajectory=trajectory, user=request.user)
        return Response({"job": job.pk, "status": job.status}, status=status.HTTP_202_ACCEPTED)

    def _visible_trajectory(self, pk) -> Trajectory:
        try:
            trajectory_id = int(pk)
        except (TypeError, ValueError):
            raise NotFound("No such trajectory.") from None
        trajectory = (
            Trajectory.objects.filter(
                pk=trajectory_id, task__in=access.visible_tasks(self.request.user)
            )
            .select_related("task")
            .first()
        )
        if trajectory is None:
            raise NotFound("No such trajectory.")
        return trajectory


class _ReadOnlyReport(viewsets.ViewSet):
    """A computed report: GET on the collection only."""

    def get_queryset(self):  # for the permission class and the schema; never listed
        return Trajectory.objects.none()


class EvaluationMatrixViewSet(_ReadOnlyReport):
    """Models x specs of one task: how often each model satisfied each spec."""

    @extend_schema(
        parameters=[OpenApiParameter("task", int_schema(), required=True)],
        responses=OpenApiTypes.OBJECT,
    )
    def list(self, request):
        only_params(request, ("task",))
        task = _task_param(request)
        matrix = spec_matrix(task=task).as_dict()
        matrix["task"] = task.pk
        matrix["instance_id"] = task.instance_id
        matrix["resolution"] = resolution_by_model(task=task)
        return Response(matrix)


class PassRatesViewSet(_ReadOnlyReport):
    """Per model and spec kind (functional, error-handling, interface...), the share of spec
    results satisfied, over one task or one dataset."""

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "scope",
                exploded_object(
                    {"task": int_schema(), "dataset": {"type": "string", "minLength": 1}},
                    minProperties=1,
                    maxProperties=1,
                ),
                style="form",
                explode=True,
                required=True,
                description=(
                    "Exactly one of `task` (a task id) or `dataset` (a dataset name), each a "
                    "query parameter of its own: `?task=12` or `?dataset=core`. A task or "
                    "dataset you cannot see is a 404."
                ),
            )
        ],
        responses=OpenApiTypes.OBJECT,
    )
    def list(self, request):
        only_params(request, ("task", "dataset"))
        task = _task_param(request, required=False)
        dataset = _dataset_param(request)
        if (task is None) == (dataset is None):
            raise ValidationError({"task": ["Give exactly one of 'task' or 'dataset'."]})
        scope = {"task": task.pk} if task else {"dataset": dataset.name}
        return Response(
            {
                **scope,
                "rates": pass_rates_by_kind(task=task, dataset=dataset),
                "resolution": resolution_by_model(task=task, dataset=dataset),
            }
        )


class AuditCalibrationViewSet(_ReadOnlyReport):
    """How well the review agent's verdicts predict human decisions, per dataset: for blind
    decisions (the reviewer did not see the findings), informed ones (the findings may have
    anchored them) and all, each row (the review agent, its heuristic and its LLM part) with
    its subset size and prevalence, three baselines (always approve, always flag, random at
    the row's own rate), 95% seeded bootstrap intervals for accuracy, kappa and the difference
    from each baseline, and a verdict: `beats_every_baseline`, `ties`, `loses` or
    `not_enough_decisions`. The calibration page, the dashboard and release datasheets show
    the same computation. `method` says how each figure is made."""

    @extend_schema(
        parameters=[OpenApiParameter("dataset", str)], responses=CalibrationListSerializer
    )
    def list(self, request):
        only_params(request, ("dataset",))
        dataset = _dataset_param(request)
        datasets = [dataset] if dataset else list(access.visible_datasets(request.user))
        return Response({"datasets": [audit_calibration(dataset=d) for d in datasets]})


class AuditRunViewSet(_ReadOnlyReport):
    """The audits of a task (newest first): findings written, LLM audit status and errors.
    A curator may queue one (`POST ?task=`, `&llm=true|false` to ask for the LLM auditor or
    to skip it; by default it runs when an endpoint is configured)."""

    def required_role(self, request):
        return access.CURATOR if request.method == "POST" else None

    @extend_schema(
        parameters=[OpenApiParameter("task", int_schema(), required=True)],
        responses=OpenApiTypes.OBJECT,
    )
    def list(self, request):
        only_params(request, ("task",))
        task = _task_param(request)
        runs = task_audit_runs(task=task)
        if findings_hidden(task=task, user=request.user):
            # The blind review sample: not even how many findings, until the reviewer decides.
            for run in runs:
                run.update(message="", findings=None, unsafe=[], llm=None)
        return Response({"task": task.pk, "audits": runs})

    @extend_schema(
        request=None,
        parameters=[
            OpenApiParameter("task", int_schema(), required=True),
            OpenApiParameter("llm", bool),
        ],
        responses={202: OpenApiTypes.OBJECT},
    )
    def create(self, request):
        only_params(request, ("task", "llm"))
        task = _task_param(request)
        llm = bool_param(request, "llm", True) if "llm" in request.query_params else None
        job = task_audit_enqueue(task=task, user=request.user, llm=llm)
        return Response(
            {"task": task.pk, "job": job.pk, "status": job.status}, status=status.HTTP_202_ACCEPTED
        )


router.register("trajectories", TrajectoryViewSet, basename="trajectory")
router.register("evaluation-matrix", EvaluationMatrixViewSet, basename="evaluation-matrix")
router.register("pass-rates", PassRatesViewSet, basename="pass-rates")
router.register("audit-calibration", AuditCalibrationViewSet, basename="audit-calibration")
router.register("audits", AuditRunViewSet, basename="audit-run")
