"""Grading over the API: send patches, get per-test and per-spec outcomes back.

    POST /api/v1/tasks/{id}/grade   {"patch", "model"?, "revision"?}          -> the grade
    POST /api/v1/grades             {"items": [{"task", "patch", ...}, ...]}  -> grade and job ids
    GET  /api/v1/grades/{id}?wait=S                                            -> the grade
    GET  /api/v1/grades?ids=1,2&wait=S                                         -> several

Every operation needs a token with the `grade` scope (or a signed-in reviewer) and a task the
caller can see. `wait` (seconds, up to SPECLOOM_GRADE_WAIT_MAX_SECONDS) holds the answer until
the grades are finished: a long-poll instead of polling.
"""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers, status, viewsets
from rest_framework.exceptions import NotFound, Throttled, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from curation import access
from curation.api.errors import error_body
from curation.api.params import MAX_ID, JSONInputSerializer
from curation.api.parsers import JSONParser
from curation.api.repositories import StrictCharField
from curation.api.router import router
from curation.api.schema import ERROR_REF
from curation.models import ApiToken
from curation.selectors.grades import get_grade_for_user, grade_as_dict, grades_visible
from curation.services.grading import (
    GradeConflict,
    GradeInputError,
    GradeLimited,
    GradeRequest,
    grades_submit,
    grades_wait,
)

GRADE_SCOPE = "grade"
MAX_IDS = 500


class GradePatchSerializer(JSONInputSerializer):
    patch = StrictCharField(
        allow_blank=True, trim_whitespace=False, help_text="a unified diff (empty: no change)"
    )
    model = StrictCharField(
        max_length=200, required=False, allow_blank=True, default="", help_text="model label"
    )
    revision = serializers.IntegerField(
        min_value=1,
        max_value=MAX_ID,
        required=False,
        help_text="the task revision you read; 409 if it moved on",
    )


class GradeItemSerializer(GradePatchSerializer):
    task = serializers.IntegerField(min_value=1, max_value=MAX_ID, help_text="task id")


class GradeBatchSerializer(JSONInputSerializer):
    # A list field (not many=True) so that the schema says minItems and maxItems.
    items = serializers.ListField(
        child=GradeItemSerializer(),
        min_length=1,
        max_length=settings.SPECLOOM_GRADE_BATCH_MAX,
    )


class TimingsSerializer(serializers.Serializer):
    queued_seconds = serializers.FloatField(allow_null=True)
    run_seconds = serializers.FloatField(allow_null=True)
    total_seconds = serializers.FloatField(allow_null=True)


class SpecKindSerializer(serializers.Serializer):
    satisfied = serializers.IntegerField()
    total = serializers.IntegerField()


class GradeSerializer(serializers.Serializer):
    """A grade as stored: a repeat of the same patch on the same task revision returns it."""

    id = serializers.IntegerField()
    task = serializers.IntegerField()
    instance_id = serializers.CharField()
    task_revision = serializers.IntegerField()
    patch_sha256 = serializers.CharField()
    models = serializers.ListField(child=serializers.CharField())
    status = serializers.ChoiceField(choices=["queued", "running", "done", "failed"])
    job = serializers.IntegerField(allow_null=True)
    resolved = serializers.BooleanField(allow_null=True, help_text="every test passed")
    resolution = serializers.ChoiceField(choices=["full", "partial", "none"], allow_null=True)
    patch_applied = serializers.BooleanField(allow_null=True)
    patch_error = serializers.CharField()
    tests = serializers.DictField(child=serializers.CharField(), help_text="node id -> outcome")
    specs = serializers.DictField(child=serializers.BooleanField(), help_text="key -> satisfied")
    spec_kinds = serializers.DictField(child=SpecKindSerializer())
    flaky_tests = serializers.ListField(child=serializers.CharField())
    problems = serializers.ListField(child=serializers.CharField())
    error = serializers.CharField(help_text="why grading itself failed (status failed)")
    timings = TimingsSerializer()
    created_at = serializers.CharField()
    started_at = serializers.CharField(allow_null=True)
    finished_at = serializers.CharField(allow_null=True)


SUBMITTED = inline_serializer(
    "GradesSubmitted",
    {
        "grades": inline_serializer(
            "GradeSubmitted",
            {
                "id": serializers.IntegerField(),
                "task": serializers.IntegerField(),
                "job": serializers.IntegerField(allow_null=True),
                "status": serializers.CharField(),
                "patch_sha256": serializers.CharField(),
                "created": serializers.BooleanField(help_text="false: graded or queued before"),
            },
            many=True,
        )
    },
)
WAIT_LIMIT = 3600  # what the schema allows; the server holds at most its own setting
WAIT = OpenApiParameter(
    "wait",
    {"type": "integer", "minimum": 0, "maximum": WAIT_LIMIT},
    description="seconds to hold the answer until the grades are finished (long-poll; held at "
    "most SPECLOOM_GRADE_WAIT_MAX_SECONDS)",
)
ERRORS = {
    400: OpenApiResponse(ERROR_REF, description="bad input"),
    409: OpenApiResponse(
        ERROR_REF, description="the task moved to another revision, or has no tests to grade"
    ),
    429: OpenApiResponse(
        ERROR_REF, description="a rate or concurrency limit of the token (see Retry-After)"
    ),
}


def _wait_seconds(request) -> float:
    raw = request.query_params.get("wait")
    if raw is None or raw == "":
        return 0.0
    if not raw.isascii() or not raw.isdigit() or int(raw) > WAIT_LIMIT:
        raise ValidationError({"wait": [f"Whole seconds from 0 to {WAIT_LIMIT}."]})
    return float(min(int(raw), settings.SPECLOOM_GRADE_WAIT_MAX_SECONDS))


def _hold(request, grade_ids: list[int]) -> None:
    seconds = _wait_seconds(request)
    grades_wait(grade_ids=grade_ids, seconds=seconds, user=request.user, token=_token(request))


def _token(request) -> ApiToken | None:
    return request.auth if isinstance(request.auth, ApiToken) else None


def _submit(request, items: list[GradeRequest]):
    try:
        return grades_submit(requests=items, user=request.user, token=_token(request))
    except GradeInputError as exc:
        raise ValidationError({"non_field_errors": [str(exc)]}) from None
    except GradeLimited as exc:
        raise Throttled(wait=exc.retry_after, detail=str(exc)) from None


def _conflict(exc: GradeConflict) -> Response:
    return Response(error_body(409, str(exc), exc.details), status=status.HTTP_409_CONFLICT)


class TaskGradeView(APIView):
    """Grade one patch on one task."""

    required_scope = GRADE_SCOPE

    @extend_schema(
        request=GradePatchSerializer,
        parameters=[WAIT],
        responses={200: GradeSerializer, 202: GradeSerializer, **ERRORS},
        operation_id="tasks_grade",
    )
    def post(self, request, pk: int):
        """Grade a patch against the task's hidden tests (202 while it runs; 200 with the stored
        grade when this patch was graded on this revision before). `?wait=S` holds the answer
        until it is finished."""
        task = access.get_task_for_user(request.user, pk)
        data = GradePatchSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        item = GradeRequest(
            task=task, patch=values["patch"], model=values["model"], revision=values.get("revision")
        )
        try:
            (submitted,) = _submit(request, [item])
        except GradeConflict as exc:
            return _conflict(exc)
        _hold(request, [submitted.grade.pk])
        grade = get_grade_for_user(request.user, submitted.grade.pk)
        code = status.HTTP_200_OK if grade.is_finished else status.HTTP_202_ACCEPTED
        return Response(grade_as_dict(grade), status=code)


class GradeViewSet(viewsets.ViewSet):
    """Grades of patches on the tasks you can see."""

    required_scope = GRADE_SCOPE
    parser_classes = [JSONParser]  # a batch is a JSON object

    @extend_schema(request=GradeBatchSerializer, responses={202: SUBMITTED, **ERRORS})
    def create(self, request):
        """Grade a batch of (task, patch) pairs; the patches of one task are graded together,
        in parallel, on its cached environment. Answers the grade and job ids."""
        data = GradeBatchSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        raw = data.validated_data["items"]
        if len(raw) > settings.SPECLOOM_GRADE_BATCH_MAX:
            raise ValidationError(
                {"items": [f"At most {settings.SPECLOOM_GRADE_BATCH_MAX} pairs per request."]}
            )
        tasks = {
            task.pk: task
            for task in access.visible_tasks(request.user).filter(
                pk__in={item["task"] for item in raw}
            )
        }
        missing = sorted({item["task"] for item in raw} - set(tasks))
        if missing:
            raise NotFound(f"No such task: {', '.join(map(str, missing))}.")
        items = [
            GradeRequest(
                task=tasks[item["task"]],
                patch=item["patch"],
                model=item["model"],
                revision=item.get("revision"),
            )
            for item in raw
        ]
        try:
            submitted = _submit(request, items)
        except GradeConflict as exc:
            return _conflict(exc)
        body = {
            "grades": [
                {
                    "id": s.grade.pk,
                    "task": s.grade.task_id,
                    "job": s.grade.job_id,
                    "status": s.grade.status,
                    "patch_sha256": s.grade.patch_sha256,
                    "created": s.created,
                }
                for s in submitted
            ]
        }
        return Response(body, status=status.HTTP_202_ACCEPTED)

    @extend_schema(
        parameters=[OpenApiParameter("id", int, OpenApiParameter.PATH), WAIT],
        responses={200: GradeSerializer},
    )
    def retrieve(self, request, pk=None):
        """One grade; `?wait=S` holds the answer until it is finished."""
        grade = get_grade_for_user(request.user, pk)
        if not grade.is_finished:
            _hold(request, [grade.pk])
            grade = get_grade_for_user(request.user, pk)
        return Response(grade_as_dict(grade))

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "ids",
                str,
                required=True,
                description=f"comma-separated grade ids (at most {MAX_IDS})",
                pattern=rf"^[0-9]{{1,18}}(,[0-9]{{1,18}}){{0,{MAX_IDS - 1}}}$",
            ),
            WAIT,
        ],
        responses={200: GradeSerializer(many=True)},
    )
    def list(self, request):
        """Several grades by id (those you cannot see are left out); `?wait=S` holds the answer
        until all of them are finished."""
        raw = request.query_params.get("ids", "")
        parts = [part.strip() for part in raw.split(",") if part.strip()]
        if not parts or not all(p.isascii() and p.isdigit() for p in parts) or len(parts) > MAX_IDS:
            raise ValidationError({"ids": [f"Give 1 to {MAX_IDS} grade ids, comma-separated."]})
        ids = [int(part) for part in parts]
        visible = grades_visible(request.user).filter(pk__in=ids)
        _hold(request, list(visible.values_list("pk", flat=True)))
        return Response([grade_as_dict(grade) for grade in visible.all()])


router.register("grades", GradeViewSet, basename="grade")
