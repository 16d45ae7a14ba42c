"""Curators create manual tasks and queue validation from the admin."""

import pytest
from django.urls import reverse

from curation.models import Task
from tests.curation.tasks_fixtures import FIXTURES, hand_made_task, sample_repository
from workers.models import Job

pytestmark = pytest.mark.django_db


def _inline_management(prefix: str) -> dict:
    return {
        f"{prefix}-TOTAL_FORMS": "1",
        f"{prefix}-INITIAL_FORMS": "0",
        f"{prefix}-MIN_NUM_FORMS": "0",
        f"{prefix}-MAX_NUM_FORMS": "1000",
    }


def _add_form(repository, dataset, **overrides) -> dict:
    data = {
        "repository": repository.pk,
        "dataset": dataset.pk,
        "base_commit": "",
        "title": "Tables of contents",
        "problem_statement": "Build the TOC.",
        "difficulty": "",
        "difficulty_score": "",
        "reference_patch": (FIXTURES / "marktext_toc" / "reference.patch").read_text(),
        "test_patch": (FIXTURES / "marktext_toc" / "tests.patch").read_text(),
        "metadata": "{}",
        **_inline_management("specs"),
        "specs-0-key": "S1",
        "specs-0-kind": "functional",
        "specs-0-statement": "build_toc nests headings.",
        "specs-0-order": "0",
        **_inline_management("tests"),
        "tests-0-nodeid": "tests/test_toc_spec.py::test_heading_anchors_are_unique",
        "tests-0-intended_role": "FAIL_TO_PASS",
    }
    data.update(overrides)
    return data


def test_a_curator_adds_a_manual_task_and_validation_is_queued(admin_client, repo_storage, dataset):
    repository = sample_repository("marktext")
    response = admin_client.post(reverse("admin:curation_task_add"), _add_form(repository, dataset))
    assert response.status_code == 302, response.content.decode()[:2000]
    task = Task.objects.get()
    assert task.instance_id == "specloom__marktext-1"
    assert task.origin == "manual"
    assert task.base_commit == repository.default_commit
    assert task.status == "validating"
    assert task.tests.get().intended_role == "FAIL_TO_PASS"
    job = Job.objects.get(kind="validate_task")
    assert job.params["task_id"] == task.pk


def test_the_add_form_rejects_a_patch_that_is_not_a_diff(admin_client, repo_storage, dataset):
    repository = sample_repository("marktext")
    response = admin_client.post(
        reverse("admin:curation_task_add"),
        _add_form(repository, dataset, reference_patch="just some words"),
    )
    assert response.status_code == 200
    assert "the reference patch" in response.content.decode()
    assert not Task.objects.exists()


def test_the_add_form_rejects_an_unknown_commit(admin_client, repo_storage, dataset):
    repository = sample_repository("marktext")
    response = admin_client.post(
        reverse("admin:curation_task_add"),
        _add_form(repository, dataset, base_commit="cafebabe"),
    )
    assert response.status_code == 200
    assert "is not a commit of marktext" in response.content.decode()
    assert not Task.objects.exists()


def test_the_validate_action_queues_jobs(admin_client, repo_storage, dataset):
    task = hand_made_task("marktext_toc", dataset=dataset)
    response = admin_client.post(
        reverse("admin:curation_task_changelist"),
        {"action": "validate_tasks", "_selected_action": [task.pk]},
    )
    assert response.status_code == 302
    assert Job.objects.filter(kind="validate_task", target_id=str(task.pk)).count() == 1
    task.refresh_from_db()
    assert task.status == "validating"


def test_a_curator_starts_a_synthesis_run_from_the_admin(admin_client, repo_storage, dataset):
    repository = sample_repository("ledger")
    url = reverse("admin:curation_repository_changelist")
    page = admin_client.post(
        url, {"action": "synthesize_tasks", "_selected_action": [repository.pk]}
    )
    assert page.status_code == 200
    assert "Queue synthesis" in page.content.decode()
    response = admin_client.post(
        url,
        {
            "action": "synthesize_tasks",
            "_selected_action": [repository.pk],
            "apply": "1",
            "dataset": dataset.pk,
            "engine": "procedural",
            "count": "5",
            "seed": "1",
        },
    )
    assert response.status_code == 302
    job = Job.objects.get(kind="synthesize")
    assert job.params["count"] == 5
    assert job.params["dataset_id"] == dataset.pk
