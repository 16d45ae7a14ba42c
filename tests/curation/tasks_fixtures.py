"""Hand-made tasks on the sample repositories (tests/fixtures/tasks), ready to validate."""

from __future__ import annotations

import json
from pathlib import Path

from curation.models import Dataset, Repository, Task
from curation.services.repositories import repository_import
from curation.services.tasks import task_create
from workers import gitstore

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "tasks"
EXAMPLES = ROOT / "examples" / "repos"


def sample_repository(name: str) -> Repository:
    existing = Repository.objects.filter(name=name).first()
    return existing or repository_import(source=str(EXAMPLES / name), name=name)


def hand_made_task(fixture: str, *, dataset: Dataset, test_patch: str | None = None) -> Task:
    folder = FIXTURES / fixture
    spec = json.loads((folder / "task.json").read_text())
    repository = sample_repository(spec["repository"])
    base = gitstore.commit_patch(
        repository.git_dir,
        repository.default_commit,
        (folder / "base.patch").read_text(),
        f"Task base: {spec['title']}",
    )
    return task_create(
        repository=repository,
        dataset=dataset,
        title=spec["title"],
        problem_statement=spec["problem_statement"],
        base_commit=base,
        reference_patch=(folder / "reference.patch").read_text(),
        test_patch=test_patch if test_patch is not None else (folder / "tests.patch").read_text(),
        specs=spec["specs"],
        tests=spec["tests"],
        dependencies=spec["dependencies"],
        metadata=spec.get("metadata", {}),
    )


def approved_sample_tasks(dataset: Dataset) -> list[Task]:
    """Both hand-made tasks, approved by a reviewer, their deliberately flaky test marked flaky
    (as validation would find it), ready to be released."""
    from django.apps import apps

    from curation.models import TestCase
    from tests.factories import UserFactory

    reviewer = UserFactory(roles=["reviewer"])
    tasks = [
        hand_made_task("ledger_allocation", dataset=dataset),
        hand_made_task("marktext_toc", dataset=dataset),
    ]
    TestCase.objects.filter(task__in=tasks, nodeid__endswith="_flaky_on_purpose").update(
        role=TestCase.Role.FLAKY
    )
    Review = apps.get_model("review", "Review")
    for task in tasks:
        Review.objects.create(
            task=task,
            reviewer=reviewer,
            task_revision=task.revision,
            decision="approve",
            spec_clarity=0,
            test_validity=0,
            interdependency=0,
            difficulty="<15m",
        )
    Task.objects.filter(pk__in=[t.pk for t in tasks]).update(status=Task.Status.APPROVED)
    return tasks
