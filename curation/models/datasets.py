"""Datasets: the policy a task is reviewed and released under, and its blind review sample."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models
from django.db.models import Q


class Dataset(models.Model):
    class Consensus(models.TextChoices):
        UNANIMOUS = "unanimous"
        MAJORITY = "majority"

    name = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True, default="")
    reviews_required = models.PositiveSmallIntegerField(default=1)
    consensus = models.CharField(
        max_length=16, choices=Consensus.choices, default=Consensus.UNANIMOUS
    )
    validation_reruns = models.PositiveSmallIntegerField(default=3)
    # The share of tasks (percent) whose reviewers decide without seeing the review agent's
    # findings: their decisions measure the agent against humans it did not anchor.
    blind_review_share = models.PositiveSmallIntegerField(
        default=0,
        help_text="Percent of tasks reviewed blind: findings stay hidden until the reviewer "
        "decides. The sample is a hash of the dataset and the instance id (reproducible).",
    )
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="datasets",
        help_text="Reviewers who can see and review this dataset's tasks.",
    )
    webhook_url = models.URLField(blank=True, default="")
    webhook_secret = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(reviews_required__gte=1), name="dataset_reviews_required_positive"
            ),
            models.CheckConstraint(
                condition=Q(validation_reruns__gte=1), name="dataset_reruns_positive"
            ),
            models.CheckConstraint(
                condition=Q(blind_review_share__lte=100), name="dataset_blind_share_percent"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def blind_for(self, instance_id: str) -> bool:
        """Whether the task is in the blind review sample (see `in_blind_sample`)."""
        return in_blind_sample(
            dataset=self.name, share=self.blind_review_share, instance_id=instance_id
        )


def in_blind_sample(*, dataset: str, share: int, instance_id: str) -> bool:
    """The same answer on every machine and every run: a hash of the dataset's name and the
    task's instance id, in one of 100 buckets, below the share (percent)."""
    if not share:
        return False
    digest = hashlib.sha256(f"{dataset}\n{instance_id}".encode()).hexdigest()
    return int(digest[:8], 16) % 100 < share
