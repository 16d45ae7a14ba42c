"""Findings belong to the revision (and the audit) they were made on; datasets get a blind
review share. Existing findings are pinned to the revision that was in force when they were
written (from the task's revision history); the agent's findings are grouped into one audit per
job that wrote them, and a task's last successful audit job becomes an audit even when it found
nothing, so a clean audit still counts. Earlier sets were deleted by the old code: unknown."""

import django.db.models.deletion
from django.db import migrations, models

AUDIT_KIND = "audit_task"
HEURISTIC = "heuristic"
LLM_PREFIX = "llm:"


def _revision_at(history, current, when):
    """The task's revision at `when`: the last edit made by then, else the one before the first
    recorded edit (or the current one when it was never edited)."""
    if not history:
        return current
    revision = history[0][0] - 1 or 1
    for number, at in history:
        if when is not None and at <= when:
            revision = number
    return revision


def pin_existing_findings(apps, schema_editor):
    Task = apps.get_model("curation", "Task")
    TaskRevision = apps.get_model("curation", "TaskRevision")
    Finding = apps.get_model("curation", "Finding")
    Audit = apps.get_model("curation", "Audit")
    Job = apps.get_model("workers", "Job")
    ContentType = apps.get_model("contenttypes", "ContentType")
    task_type = ContentType.objects.filter(app_label="curation", model="task").first()
    latest_jobs = {}
    if task_type is not None:
        for job in Job.objects.filter(
            kind=AUDIT_KIND, status="succeeded", target_type=task_type
        ).order_by("finished_at", "id"):
            latest_jobs[int(job.target_id)] = job
    task_ids = set(Finding.objects.values_list("task_id", flat=True)) | set(latest_jobs)
    for task in Task.objects.filter(pk__in=task_ids).iterator():
        history = list(
            TaskRevision.objects.filter(task=task)
            .order_by("created_at", "id")
            .values_list("revision", "created_at")
        )
        groups = {}
        for finding in Finding.objects.filter(task=task):
            finding.task_revision = _revision_at(history, task.revision, finding.created_at)
            agent = finding.source == HEURISTIC or finding.source.startswith(LLM_PREFIX)
            if agent:
                groups.setdefault(finding.job_id, []).append(finding)
            else:
                finding.save(update_fields=["task_revision"])
        last_job = latest_jobs.get(task.pk)
        if last_job is not None and last_job.pk not in groups:
            groups[last_job.pk] = []
        for job_id, findings in groups.items():
            llm = [f for f in findings if f.source.startswith(LLM_PREFIX)]
            when = max((f.created_at for f in findings), default=None)
            if last_job is not None and job_id == last_job.pk:
                when = last_job.finished_at or when
                llm_result = (last_job.result or {}).get("llm") or {}
                llm_status = llm_result.get("status", "") if llm_result else ""
            else:
                llm_status = "ok" if llm else ""
            audit = Audit.objects.create(
                task=task,
                task_revision=_revision_at(history, task.revision, when),
                job_id=job_id,
                llm_status=llm_status if llm_status in ("ok", "failed") else "",
                llm_model=llm[0].source[len(LLM_PREFIX) :] if llm else "",
            )
            if when is not None:
                Audit.objects.filter(pk=audit.pk).update(created_at=when)
            for finding in findings:
                finding.audit = audit
                finding.save(update_fields=["task_revision", "audit"])


class Migration(migrations.Migration):
    dependencies = [
        ("curation", "0004_environment_recipe"),
        ("workers", "0001_initial"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.CreateModel(
            name="Audit",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("task_revision", models.PositiveIntegerField()),
                ("trajectory_count", models.PositiveIntegerField(default=0)),
                (
                    "trajectory_digest",
                    models.CharField(
                        blank=True,
                        default="",
                        help_text="sha256 of the trajectories and their evaluations the audit saw; empty for audits recorded before digests existed.",
                        max_length=64,
                    ),
                ),
                (
                    "inputs_digest",
                    models.CharField(
                        blank=True,
                        default="",
                        help_text="sha256 of everything the audit read: an audit with the same digest as the last one has nothing new to say.",
                        max_length=64,
                    ),
                ),
                (
                    "llm_status",
                    models.CharField(
                        blank=True,
                        choices=[("", "Not Run"), ("ok", "Ok"), ("failed", "Failed")],
                        default="",
                        max_length=8,
                    ),
                ),
                ("llm_model", models.CharField(blank=True, default="", max_length=200)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ["task", "created_at", "id"],
            },
        ),
        migrations.AddField(
            model_name="dataset",
            name="blind_review_share",
            field=models.PositiveSmallIntegerField(
                default=0,
                help_text="Percent of tasks reviewed blind: findings stay hidden until the reviewer decides. The sample is a hash of the dataset and the instance id (reproducible).",
            ),
        ),
        migrations.AddField(
            model_name="finding",
            name="superseded",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name="finding",
            name="task_revision",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddConstraint(
            model_name="dataset",
            constraint=models.CheckConstraint(
                condition=models.Q(("blind_review_share__lte", 100)),
                name="dataset_blind_share_percent",
            ),
        ),
        migrations.AddField(
            model_name="audit",
            name="job",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="workers.job",
            ),
        ),
        migrations.AddField(
            model_name="audit",
            name="task",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="audits",
                to="curation.task",
            ),
        ),
        migrations.AddField(
            model_name="finding",
            name="audit",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="findings",
                to="curation.audit",
            ),
        ),
        migrations.AddIndex(
            model_name="audit",
            index=models.Index(
                fields=["task", "task_revision", "created_at"], name="audit_task_revision"
            ),
        ),
        migrations.RunPython(pin_existing_findings, migrations.RunPython.noop),
    ]
