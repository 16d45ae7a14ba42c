"""Read-only evaluations (a trajectory's patch run against its task's tests) and findings."""

from __future__ import annotations

from django.db.models import Prefetch
from rest_framework import serializers, viewsets

from curation import access
from curation.api.filters import EvaluationFilter, FindingFilter
from curation.api.router import router
from curation.models import Evaluation, Finding, SpecResult
from curation.selectors.audit import blind_task_ids

PATCH_ERROR_CHARS = 4000


class TaskEvaluationSerializer(serializers.ModelSerializer):
    task = serializers.IntegerField(source="trajectory.task_id", read_only=True)
    instance_id = serializers.CharField(source="trajectory.task.instance_id", read_only=True)
    model = serializers.CharField(source="trajectory.model_name", read_only=True)
    patch_error = serializers.SerializerMethodField()
    spec_satisfied = serializers.SerializerMethodField()

    class Meta:
        model = Evaluation
        fields = [
            "id",
            "trajectory",
            "task",
            "instance_id",
            "model",
            "task_revision",
            "patch_applied",
            "patch_error",
            "resolved",
            "test_outcomes",
            "spec_satisfied",
            "touched_test_files",
            "flaky_tests",
            "run_seconds",
            "created_at",
        ]
        read_only_fields = fields

    def get_patch_error(self, evaluation) -> str:
        return evaluation.patch_error[-PATCH_ERROR_CHARS:]

    def get_spec_satisfied(self, evaluation) -> dict[str, bool]:
        return {result.spec.key: result.satisfied for result in evaluation.spec_results.all()}


class EvaluationViewSet(viewsets.ReadOnlyModelViewSet):
    """Evaluations of trajectories on the tasks you can see."""

    serializer_class = TaskEvaluationSerializer
    filterset_class = EvaluationFilter

    def get_queryset(self):
        visible = access.visible_tasks(self.request.user)
        return (
            Evaluation.objects.filter(trajectory__task__in=visible.values("pk"))
            .select_related("trajectory__task")
            .prefetch_related(
                Prefetch(
                    "spec_results",
                    queryset=SpecResult.objects.select_related("spec").order_by(
                        "spec__order", "spec_id"
                    ),
                )
            )
            .order_by("id")
        )


class FindingSerializer(serializers.ModelSerializer):
    instance_id = serializers.CharField(source="task.instance_id", read_only=True)

    class Meta:
        model = Finding
        fields = [
            "id",
            "task",
            "instance_id",
            "trajectory",
            "kind",
            "severity",
            "message",
            "evidence",
            "source",
            "dismissed",
            "task_revision",
            "audit",
            "superseded",
            "created_at",
        ]
        read_only_fields = fields


class FindingViewSet(viewsets.ReadOnlyModelViewSet):
    """What the review agent (and validation) found on the tasks you can see: the current
    findings (each source's latest set), or with `superseded=true` the sets that later audits
    replaced (`task_revision` and `audit` say which revision and audit each belongs to).
    Findings of a task in its dataset's blind review sample stay hidden from a reviewer until
    they have decided it."""

    serializer_class = FindingSerializer
    filterset_class = FindingFilter

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator has no user
            return Finding.objects.none()
        user = self.request.user
        visible = access.visible_tasks(user)
        findings = Finding.objects.filter(task__in=visible.values("pk")).exclude(
            task_id__in=blind_task_ids(user=user)
        )
        if "superseded" not in self.request.query_params:
            findings = findings.filter(superseded=False)
        return findings.select_related("task").order_by("id")


router.register("evaluations", EvaluationViewSet, basename="evaluation")
router.register("findings", FindingViewSet, basename="finding")
