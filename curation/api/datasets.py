"""Read-only datasets with their review policy. The webhook secret never leaves the server."""

from __future__ import annotations

import django_filters
from rest_framework import serializers, viewsets

from curation import access
from curation.api.router import router
from curation.models import Dataset


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
            "blind_review_share",
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


router.register("datasets", DatasetViewSet, basename="dataset")
