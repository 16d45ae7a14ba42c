import pytest

from curation.models import Release
from tests.factories import TaskFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_the_list_counts_tasks_members_and_releases_apart(curator, dataset, alice):
    for status in ("approved", "released", "needs_review", "draft"):
        TaskFactory(dataset=dataset, status=status)
    dataset.members.add(UserFactory(username="erin", roles=["reviewer"]))
    Release.objects.create(dataset=dataset, version="v1", status="failed")
    response = curator.get("/datasets/")
    row = next(d for d in response.context["datasets"] if d.name == "core")
    assert (row.task_count, row.approved_count, row.member_count, row.release_count) == (
        4,
        2,
        2,
        1,
    )
