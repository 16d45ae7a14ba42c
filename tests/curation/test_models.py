import pytest
from django.db import IntegrityError, transaction

from curation.models import Release, ReleaseTask, SpecDependency, Task
from tests.factories import SpecificationFactory, TaskFactory

pytestmark = pytest.mark.django_db


def _integrity_error(create) -> str:
    with pytest.raises(IntegrityError) as caught, transaction.atomic():
        create()
    return str(caught.value)


def test_a_spec_cannot_depend_on_itself():
    spec = SpecificationFactory()
    _integrity_error(
        lambda: SpecDependency.objects.create(
            task=spec.task, from_spec=spec, to_spec=spec, evidence="declared"
        )
    )


def test_a_spec_cannot_depend_on_a_spec_of_another_task():
    mine = SpecificationFactory()
    theirs = SpecificationFactory(task=TaskFactory())
    message = _integrity_error(
        lambda: SpecDependency.objects.create(
            task=mine.task, from_spec=mine, to_spec=theirs, evidence="observed"
        )
    )
    assert "specdep_same_task" in message


def test_a_dependency_edge_is_recorded_once_per_evidence():
    a = SpecificationFactory()
    b = SpecificationFactory(task=a.task)
    SpecDependency.objects.create(task=a.task, from_spec=a, to_spec=b, evidence="declared")
    SpecDependency.objects.create(task=a.task, from_spec=a, to_spec=b, evidence="observed")
    _integrity_error(
        lambda: SpecDependency.objects.create(
            task=a.task, from_spec=a, to_spec=b, evidence="declared"
        )
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [("status", "shipped"), ("origin", "magic"), ("difficulty", "1 week"), ("revision", 0)],
    ids=["status", "origin", "difficulty", "revision"],
)
def test_a_task_refuses_values_outside_its_choices(field, value):
    task = TaskFactory()
    _integrity_error(lambda: Task.objects.filter(pk=task.pk).update(**{field: value}))


def test_instance_ids_are_unique():
    task = TaskFactory()
    _integrity_error(lambda: TaskFactory(instance_id=task.instance_id))


def test_a_ready_release_cannot_be_changed_in_the_database():
    task = TaskFactory(status=Task.Status.APPROVED)
    release = Release.objects.create(dataset=task.dataset, version="v1")
    ReleaseTask.objects.create(
        release=release, task=task, instance_id=task.instance_id, revision=1, content_sha256="a"
    )
    Release.objects.filter(pk=release.pk).update(status="ready")
    message = _integrity_error(
        lambda: Release.objects.filter(pk=release.pk).update(version="v1-edited")
    )
    assert "release_immutable" in message
    _integrity_error(
        lambda: ReleaseTask.objects.filter(release=release).update(content_sha256="tampered")
    )
    _integrity_error(
        lambda: ReleaseTask.objects.create(
            release=release,
            task=TaskFactory(dataset=task.dataset),
            instance_id="x",
            revision=1,
            content_sha256="b",
        )
    )
