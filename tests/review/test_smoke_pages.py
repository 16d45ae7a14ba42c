"""Every page of the workspace renders for a reviewer (a quick net under the detailed tests)."""

import pytest
from django.urls import reverse

from review import services
from tests.review.scenario import rich_task

pytestmark = pytest.mark.django_db


def test_it_renders_every_page(client, alice, dataset):
    task = rich_task(dataset=dataset)
    client.force_login(alice)
    for url in [
        reverse("dashboard"),
        reverse("review-queue"),
        reverse("review-agreement"),
        reverse("review-task", args=[task.pk]),
        reverse("review-task-history", args=[task.pk]),
        *[reverse("review-trajectory", args=[t.pk]) for t in task.trajectories.all()],
    ]:
        response = client.get(url)
        assert response.status_code == 200, (url, response.content[:2000])
    services.review_claim(task=task, user=alice)
    response = client.get(reverse("review-task", args=[task.pk]))
    assert b"decision-form" in response.content
