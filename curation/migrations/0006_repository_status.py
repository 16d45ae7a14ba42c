# Repository status for the import job and the status table of a corpus.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def mark_rows_without_files(apps, schema_editor):
    """Rows made without an import (the old admin add form) have no stored repository."""
    Repository = apps.get_model("curation", "Repository")
    Repository.objects.filter(
        models.Q(git_path="") | models.Q(default_commit__in=["", "-"])
    ).update(
        status="failed",
        status_reason="no stored git repository: it was never imported; import it from its source",
    )
    for repository in Repository.objects.exclude(status="failed").iterator():
        test_files = (repository.layout or {}).get("test_files")
        if isinstance(test_files, int):
            Repository.objects.filter(pk=repository.pk).update(test_files=test_files)


class Migration(migrations.Migration):
    dependencies = [
        ("curation", "0005_finding_revision_and_blind_review"),
        ("workers", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="repository",
            name="import_job",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="workers.job",
            ),
        ),
        migrations.AddField(
            model_name="repository",
            name="requested_commit",
            field=models.CharField(blank=True, default="", max_length=200),
        ),
        migrations.AddField(
            model_name="repository",
            name="source_key",
            field=models.CharField(blank=True, default="", max_length=500),
        ),
        migrations.AddField(
            model_name="repository",
            name="status",
            field=models.CharField(
                choices=[
                    ("queued", "queued"),
                    ("importing", "importing"),
                    ("imported", "imported"),
                    ("environment_ok", "environment ok"),
                    ("tests_collected", "tests collected"),
                    ("tasks_verified", "tasks verified"),
                    ("failed", "failed"),
                ],
                default="imported",
                max_length=16,
            ),
        ),
        migrations.AddField(
            model_name="repository",
            name="status_reason",
            field=models.TextField(
                blank=True,
                default="",
                help_text="Why it failed, or a warning (e.g. no test files).",
            ),
        ),
        migrations.AddField(
            model_name="repository",
            name="status_updated_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="repository",
            name="tasks_verified",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="repository",
            name="test_files",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="repository",
            name="tests_collected",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="repository",
            name="default_commit",
            field=models.CharField(blank=True, max_length=40),
        ),
        migrations.AlterField(
            model_name="repository",
            name="git_path",
            field=models.CharField(
                blank=True, help_text="Bare repository, relative to storage.", max_length=500
            ),
        ),
        migrations.AddConstraint(
            model_name="repository",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    (
                        "status__in",
                        [
                            "queued",
                            "importing",
                            "imported",
                            "environment_ok",
                            "tests_collected",
                            "tasks_verified",
                            "failed",
                        ],
                    )
                ),
                name="repository_status_valid",
            ),
        ),
        migrations.AddConstraint(
            model_name="repository",
            constraint=models.UniqueConstraint(
                condition=models.Q(("source_key", ""), _negated=True),
                fields=("source_key", "requested_commit"),
                name="repository_source_commit",
            ),
        ),
        migrations.RunPython(mark_rows_without_files, migrations.RunPython.noop),
    ]
