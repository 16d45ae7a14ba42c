"""Jobs: follow background work (a release being cut, a validation), cancel or retry it.

Curators see every job; anyone else sees the jobs they started.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from curation import access
from curation.api.errors import Conflict
from curation.api.filters import JobFilter
from curation.api.router import router
from workers.models import Job
from workers.services import JobNotRetryable, job_cancel, job_retry

ERROR_CHARS = 4000


class JobSerializer(serializers.ModelSerializer):
    target_type = serializers.SerializerMethodField()
    error = serializers.SerializerMethodField()

    class Meta:
        model = Job
        fields = [
            "id",
            "kind",
            "status",
            "progress",
            "message",
            "error",
            "result",
            "target_type",
            "target_id",
            "attempts",
            "max_attempts",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields

    def get_target_type(self, job) -> str | None:
        return job.target_type.model if job.target_type_id else None

    def get_error(self, job) -> str:
        return job.error[-ERROR_CHARS:]


class JobViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = JobSerializer
    filterset_class = JobFilter

    def required_role(self, request):
        return access.CURATOR if request.method == "POST" else None

    def get_queryset(self):
        user = self.request.user
        jobs = Job.objects.select_related("target_type").order_by("id")
        if getattr(self, "swagger_fake_view", False):
            return jobs.none()  # the schema is built without a user
        return jobs if access.is_curator(user) else jobs.filter(created_by=user)

    @extend_schema(request=None, responses={200: JobSerializer})
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        """Cancel a job that has not finished; a running one stops at its next heartbeat."""
        job = self.get_object()
        if not job_cancel(job=job):
            raise Conflict(f"Job {job.pk} has already finished ({job.status}).")
        job.refresh_from_db()
        return Response(JobSerializer(job).data)

    @extend_schema(request=None, responses={202: JobSerializer})
    @action(detail=True, methods=["post"])
    def retry(self, request, pk=None):
        """Start a failed or cancelled job again, as a new job (the old one stays)."""
        job = self.get_object()
        try:
            retry = job_retry(job=job, user=request.user)
        except JobNotRetryable as exc:
            raise Conflict(
                f"Job {job.pk} is {job.status}; only failed or cancelled jobs retry."
            ) from exc
        retry = self.get_queryset().get(pk=retry.pk)
        return Response(JobSerializer(retry).data, status=status.HTTP_202_ACCEPTED)


router.register("jobs", JobViewSet, basename="job")
