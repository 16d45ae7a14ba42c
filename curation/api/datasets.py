"""Datasets with their review policy, and their members. The webhook secret never leaves the
server.

    GET    /api/v1/datasets                       the datasets you can see
    POST   /api/v1/datasets                       create one (curators)
    PATCH  /api/v1/datasets/{id}                  change its policy (curators)
    GET    /api/v1/datasets/{id}/members          who reviews it (curators)
    POST   /api/v1/datasets/{id}/members          add someone, optionally giving a role
    DELETE /api/v1/datasets/{id}/members/{user}   remove them
"""

from __future__ import annotations

import django_filters
from django.contrib.auth import get_user_model
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.permissions import SAFE_METHODS
from rest_framework.response import Response

from curation import access
from curation.api.errors import Conflict
from curation.api.params import JSONInputSerializer
from curation.api.repositories import StrictCharField
from curation.api.router import router
from curation.models import Dataset
from curation.selectors.quality import quality_report
from curation.services.datasets import (
    MAX_RERUNS,
    MAX_REVIEWS_REQUIRED,
    DatasetExists,
    DatasetInputError,
    dataset_add_member,
    dataset_create,
    dataset_remove_member,
    dataset_update_policy,
)


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


class PolicySerializer(JSONInputSerializer):
    description = StrictCharField(max_length=10_000, required=False, allow_blank=True)
    reviews_required = serializers.IntegerField(
        min_value=1, max_value=MAX_REVIEWS_REQUIRED, required=False
    )
    consensus = serializers.ChoiceField(choices=Dataset.Consensus.choices, required=False)
    validation_reruns = serializers.IntegerField(min_value=1, max_value=MAX_RERUNS, required=False)


class DatasetCreateSerializer(PolicySerializer):
    # What the service keeps as a name (Django's slugify of itself): said in the schema.
    name = serializers.RegexField(
        r"^[a-z0-9](?:(?:_|-_)*-?[a-z0-9])*$",
        max_length=100,
        help_text="lower-case letters, digits, - and _ (no leading, trailing or double -)",
    )


class MemberSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    roles = serializers.ListField(child=serializers.CharField())


class MemberAddSerializer(JSONInputSerializer):
    username = StrictCharField(max_length=150)
    role = serializers.ChoiceField(
        choices=[access.REVIEWER, access.CURATOR],
        required=False,
        help_text="give them this role too (curators may give reviewer; admins also curator)",
    )


def _member(user) -> dict:
    roles = sorted(access.user_roles(user))
    return {"id": user.pk, "username": user.get_username(), "roles": roles}


class DatasetViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    """The datasets you can see (curators: all; reviewers: those they are a member of)."""

    serializer_class = DatasetSerializer
    filterset_class = DatasetFilter
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    def required_role(self, request):
        if request.method not in SAFE_METHODS or self.action == "members":
            return access.CURATOR
        return None

    def get_queryset(self):
        return access.visible_datasets(self.request.user).order_by("id")

    def get_serializer_class(self):
        return {
            "create": DatasetCreateSerializer,
            "partial_update": PolicySerializer,
            "members": MemberAddSerializer,
        }.get(self.action, DatasetSerializer)

    @extend_schema(
        request=DatasetCreateSerializer,
        responses={
            201: DatasetSerializer,
            409: OpenApiResponse(description="a dataset of that name already exists"),
        },
    )
    def create(self, request, *args, **kwargs):
        """Create a dataset with its review policy."""
        data = DatasetCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            dataset = dataset_create(**data.validated_data)
        except DatasetExists as exc:
            raise Conflict(str(exc)) from None
        except DatasetInputError as exc:
            raise ValidationError({"name": [str(exc)]}) from None
        return Response(DatasetSerializer(dataset).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=PolicySerializer, responses={200: DatasetSerializer})
    def partial_update(self, request, *args, **kwargs):
        """Change the review policy; reviews already given stay."""
        dataset = self.get_object()
        data = PolicySerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            dataset_update_policy(dataset=dataset, **data.validated_data)
        except DatasetInputError as exc:
            raise ValidationError({"non_field_errors": [str(exc)]}) from None
        return Response(DatasetSerializer(dataset).data)

    @extend_schema(methods=["GET"], request=None, responses={200: MemberSerializer(many=True)})
    @extend_schema(methods=["POST"], request=MemberAddSerializer, responses={201: MemberSerializer})
    @action(detail=True, methods=["get", "post"], pagination_class=None)
    def members(self, request, pk=None):
        """Who reviews this dataset; POST adds someone (and may give them a role)."""
        dataset = self.get_object()
        if request.method == "GET":
            members = dataset.members.order_by("username").prefetch_related("groups")
            return Response([_member(user) for user in members])
        data = MemberAddSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            member = dataset_add_member(
                dataset=dataset,
                username=data.validated_data["username"],
                role=data.validated_data.get("role", ""),
                by=request.user,
            )
        except DatasetInputError as exc:
            raise ValidationError({"username": [str(exc)]}) from None
        return Response(_member(member), status=status.HTTP_201_CREATED)

    @extend_schema(
        parameters=[OpenApiParameter("user_id", int, OpenApiParameter.PATH)],
        responses={204: None},
    )
    @action(
        detail=True,
        methods=["delete"],
        url_path=r"members/(?P<user_id>[0-9]{1,18})",
        url_name="member",
    )
    def member(self, request, pk=None, user_id=None):
        """Remove a member. Leases they hold run out; their reviews stay."""
        dataset = self.get_object()
        if not get_user_model().objects.filter(pk=int(user_id)).exists() or not (
            dataset_remove_member(dataset=dataset, user_id=int(user_id))
        ):
            raise NotFound("That person is not a member of this dataset.")
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"])
    def quality(self, request, pk=None):
        """The quality report of the dataset's verified tasks: tested specs per task, hidden
        tests per task and their share linked to a spec, interaction scores, trivial share,
        example coverage (unverified specs are never counted)."""
        dataset = self.get_object()
        return Response({"dataset": dataset.name, **quality_report(tasks=dataset.tasks.all())})


router.register("datasets", DatasetViewSet, basename="dataset")
