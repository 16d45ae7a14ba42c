"""Read-only repositories. Their `source` is left out: a git URL can carry credentials."""

from __future__ import annotations

from rest_framework import serializers, viewsets

from curation import access
from curation.api.filters import RepositoryFilter
from curation.api.router import router
from curation.models import Repository


class RepositorySerializer(serializers.ModelSerializer):
    class Meta:
        model = Repository
        fields = [
            "id",
            "name",
            "source_kind",
            "default_commit",
            "upstream",
            "environment_version",
            "language",
            "setup_command",
            "test_command",
            "created_at",
        ]
        read_only_fields = fields


class RepositoryViewSet(viewsets.ReadOnlyModelViewSet):
    """Repositories: all of them for curators; for a reviewer, those their tasks come from."""

    serializer_class = RepositorySerializer
    filterset_class = RepositoryFilter

    def get_queryset(self):
        user = self.request.user
        if access.is_curator(user):
            return Repository.objects.order_by("id")
        tasks = access.visible_tasks(user)
        return Repository.objects.filter(pk__in=tasks.values("repository_id")).order_by("id")


router.register("repositories", RepositoryViewSet, basename="repository")
