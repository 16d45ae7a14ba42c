"""Read-only datasets with their review policy. The webhook secret never leaves the server."""

from __future__ import annotations

import django_filters
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from curation import access
from curation.api.router import router
from curation.models import Dataset
from curation.selectors.quality import quality_report


class DatasetFilter(django_filters.FilterSet):
    class Meta:
        model = Dataset
        fields = ["name"]


class DatasetSerializer(serializers.ModelSerializer):
    webhook_configured = serializers.SerializerMethodField()

    class Meta:
        model = Dataset
        fields = [
            "id",
            "name",
            "description",
            "reviews_required",
            "consensus",
            "validation_reruns",
            "webhook_configured",
            "created_at",
        ]
        read_only_fields = fields

    def get_webhook_configured(self, dataset) -> bool:
        return bool(dataset.webhook_url)


class DatasetViewSet(viewsets.ReadOnlyModelViewSet):
    """The datasets you can see (curators: all; reviewers: those they are a member of)."""

    serializer_class = DatasetSerializer
    filterset_class = DatasetFilter

    def get_queryset(self):
        return access.visible_datasets(self.request.user).order_by("id")

    @extend_schema(responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"])
    def quality(self, request, pk=None):
        """The quality report of the dataset's verified tasks: tested specs per task, hidden
        tests per task and their share linked to a spec, interaction scores, trivial share,
        example coverage (unverified specs are never counted)."""
        dataset = self.get_object()
        return Response({"dataset": dataset.name, **quality_report(tasks=dataset.tasks.all())})


router.register("datasets", DatasetViewSet, basename="dataset")
