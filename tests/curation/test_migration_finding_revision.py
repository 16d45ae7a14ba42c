"""The migration that pins existing findings: each to the revision in force when it was written,
the review agent's grouped into one audit per job, and a task's last clean audit kept."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("curation", "0004_environment_recipe")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return MigrationExecutor(connection).loader.project_state(targets).apps


def test_it_pins_existing_findings_to_their_revision_and_audit():
    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes()
    old = _migrate(BEFORE)
    Repository = old.get_model("curation", "Repository")
    Dataset = old.get_model("curation", "Dataset")
    Task = old.get_model("curation", "Task")
    TaskRevision = old.get_model("curation", "TaskRevision")
    Finding = old.get_model("curation", "Finding")
    Job = old.get_model("workers", "Job")
    ContentType = old.get_model("contenttypes", "ContentType")
    task_type, _ = ContentType.objects.get_or_create(app_label="curation", model="task")

    now = timezone.now()
    repo = Repository.objects.create(
        name="legacy", source_kind="path", source="/x", git_path="r.git", default_commit="0" * 40
    )
    dataset = Dataset.objects.create(name="legacy")

    def task(number, revision=1):
        return Task.objects.create(
            repository=repo,
            dataset=dataset,
            number=number,
            instance_id=f"legacy-{number}",
            base_commit="0" * 40,
            title="t",
            revision=revision,
        )

    edited, clean = task(1, revision=2), task(2)
    TaskRevision.objects.create(task=edited, revision=2, changes={})
    TaskRevision.objects.filter(task=edited).update(created_at=now - timedelta(hours=2))
    validation = Finding.objects.create(task=edited, kind="flaky", message="v", source="validation")
    Finding.objects.filter(pk=validation.pk).update(created_at=now - timedelta(hours=3))
    job = Job.objects.create(
        kind="audit_task",
        status="succeeded",
        target_type=task_type,
        target_id=str(edited.pk),
        finished_at=now - timedelta(hours=1),
        result={"llm": {"status": "ok", "model": "judge"}},
    )
    heuristic = Finding.objects.create(
        task=edited, kind="weak_test", message="h", source="heuristic", job=job, severity="high"
    )
    llm = Finding.objects.create(task=edited, kind="llm", message="l", source="llm:judge", job=job)
    Finding.objects.filter(pk__in=[heuristic.pk, llm.pk]).update(
        created_at=now - timedelta(hours=1)
    )
    clean_job = Job.objects.create(
        kind="audit_task",
        status="succeeded",
        target_type=task_type,
        target_id=str(clean.pk),
        finished_at=now,
        result={"llm": None},
    )

    try:
        new = _migrate(latest)
        Finding = new.get_model("curation", "Finding")
        Audit = new.get_model("curation", "Audit")
        # Written three hours ago, before the edit of two hours ago: revision 1.
        assert Finding.objects.get(pk=validation.pk).task_revision == 1
        assert Finding.objects.get(pk=validation.pk).audit_id is None
        audit = Audit.objects.get(task_id=edited.pk)
        assert (audit.task_revision, audit.job_id, audit.llm_status) == (2, job.pk, "ok")
        assert audit.llm_model == "judge"
        assert set(
            Finding.objects.filter(pk__in=[heuristic.pk, llm.pk]).values_list(
                "task_revision", "audit_id"
            )
        ) == {(2, audit.pk)}
        # A clean audit (no findings) is an audit too, or its decisions could not be compared.
        quiet = Audit.objects.get(task_id=clean.pk)
        assert (quiet.task_revision, quiet.job_id, quiet.llm_status) == (1, clean_job.pk, "")
        assert quiet.created_at == clean_job.finished_at
    finally:
        _migrate(latest)
