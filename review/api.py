"""Read-only reviews at /api/v1/reviews. The resource lives in the review app, which owns the
model, and registers on curation's router from `ReviewConfig.ready()`: curation.api never
imports review (DESIGN.md, enforced by import-linter).

Curators see every review of the tasks they can see; a reviewer sees only their own, so that a
second reviewer's decision is not swayed by the first's (blind double review).
"""

from __future__ import annotations

import django_filters
from rest_framework import serializers, viewsets

from curation import access
from curation.api.filters import BooleanFilter, IntegerFilter, VisibleDatasetFilter
from curation.api.router import router
from curation.review_port import Decision
from review.models import Review


class ReviewFilter(django_filters.FilterSet):
    task = IntegerFilter(field_name="task_id")
    dataset = VisibleDatasetFilter(field_name="task__dataset__name")
    reviewer = django_filters.CharFilter(field_name="reviewer__username")
    decision = django_filters.ChoiceFilter(choices=Decision.choices)
    task_revision = IntegerFilter()
    is_adjudication = BooleanFilter()

    class Meta:
        model = Review
        fields = ["task", "dataset", "reviewer", "decision", "task_revision", "is_adjudication"]


class ReviewSerializer(serializers.ModelSerializer):
    instance_id = serializers.CharField(source="task.instance_id", read_only=True)
    reviewer = serializers.CharField(source="reviewer.username", read_only=True)

    class Meta:
        model = Review
        fields = [
            "id",
            "task",
            "instance_id",
            "reviewer",
            "task_revision",
            "decision",
            "spec_clarity",
            "test_validity",
            "interdependency",
            "difficulty",
            "comment",
            "is_adjudication",
            "blind",
            "seconds_spent",
            "created_at",
        ]
        read_only_fields = fields


class ReviewViewSet(viewsets.ReadOnlyModelViewSet):
    """Reviews of tasks: decisions with the rubric (severities 0-3) and comments."""

    serializer_class = ReviewSerializer
    filterset_class = ReviewFilter

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Review.objects.none()  # the schema is built without a user
        user = self.request.user
        reviews = Review.objects.filter(
            task__in=access.visible_tasks(user).values("pk")
        ).select_related("task", "reviewer")
        if not access.is_curator(user):
            reviews = reviews.filter(reviewer=user)
        return reviews.order_by("id")


router.register("reviews", ReviewViewSet, basename="review")
