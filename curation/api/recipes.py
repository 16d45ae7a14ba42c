"""A repository's environment recipe over the API: read it with its report, edit it (curators,
optimistic concurrency by revision), and ask for it to be tried again."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from curation import access
from curation.api.errors import Conflict
from curation.api.params import JSONInputSerializer
from curation.api.parsers import JSONParser
from curation.models import EnvironmentRecipe, Repository
from curation.services.recipes import (
    RecipeConflict,
    recipe_prepare_enqueue,
    recipe_row,
    recipe_update,
)
from workers.recipes.recipe import RecipeError


class RecipeSerializer(serializers.ModelSerializer):
    # A repository whose recipe was never prepared answers a pending recipe not yet stored.
    id = serializers.IntegerField(read_only=True, allow_null=True)
    repository = serializers.IntegerField(source="repository_id", read_only=True)
    updated_at = serializers.DateTimeField(read_only=True, allow_null=True)

    class Meta:
        model = EnvironmentRecipe
        fields = [
            "id",
            "repository",
            "commit",
            "recipe",
            "source",
            "status",
            "reason",
            "hint",
            "attempts",
            "report",
            "environment_key",
            "revision",
            "updated_at",
        ]
        read_only_fields = fields


class RecipeEditSerializer(JSONInputSerializer):
    recipe = serializers.JSONField(
        help_text="install, packages, environment, setup_commands, pytest_addopts, "
        "pytest_options, python (see the README's recipe section)"
    )
    revision = serializers.IntegerField(
        min_value=1, help_text="the recipe's revision the edit started from (409 when stale)"
    )


_JOB = inline_serializer("RecipeJob", {"job": serializers.IntegerField()})


class _RecipeView(APIView):
    required_role = access.CURATOR
    parser_classes = [JSONParser]  # a recipe is a JSON object

    @staticmethod
    def repository(pk) -> Repository:
        return get_object_or_404(Repository, pk=pk)


class RepositoryRecipeView(_RecipeView):
    """/repositories/{id}/recipe: the environment recipe of the repository's default commit,
    with the report of its last try and every attempt."""

    @extend_schema(operation_id="repositories_recipe_retrieve", responses=RecipeSerializer)
    def get(self, request, pk):
        row = recipe_row(repository=self.repository(pk))
        return Response(RecipeSerializer(row).data)

    @extend_schema(
        operation_id="repositories_recipe_update",
        request=RecipeEditSerializer,
        responses={
            200: RecipeSerializer,
            400: OpenApiResponse(description="a field of the recipe is invalid"),
            409: OpenApiResponse(description="the recipe changed since `revision`"),
        },
    )
    def put(self, request, pk):
        """A curator's recipe: stored as given, then tried (the response names the job)."""
        edit = RecipeEditSerializer(data=request.data)
        edit.is_valid(raise_exception=True)
        repository = self.repository(pk)
        try:
            row = recipe_update(
                row=recipe_row(repository=repository),
                data=edit.validated_data["recipe"],
                user=request.user,
                revision=edit.validated_data["revision"],
            )
        except RecipeConflict as exc:
            raise Conflict(str(exc)) from None
        except RecipeError as exc:
            raise serializers.ValidationError({"recipe": [str(exc)]}) from None
        job = recipe_prepare_enqueue(repository=repository, user=request.user)
        return Response({**RecipeSerializer(row).data, "job": job.pk})


class RepositoryRecipePrepareView(_RecipeView):
    @extend_schema(
        operation_id="repositories_recipe_prepare",
        request=None,
        responses={202: _JOB, 409: OpenApiResponse(description="the repository is not imported")},
    )
    def post(self, request, pk):
        """Infer the recipe again (or try the curator's) and store its environment report."""
        try:
            job = recipe_prepare_enqueue(repository=self.repository(pk), user=request.user)
        except RecipeError as exc:
            raise Conflict(str(exc)) from None
        return Response({"job": job.pk}, status=status.HTTP_202_ACCEPTED)
