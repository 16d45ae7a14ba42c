"""`manage.py grade TASK PATCH_FILE`: grade a patch and print the grade as the API answers it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from curation.selectors.grades import grade_as_dict
from curation.services.grading import (
    GradeConflict,
    GradeInputError,
    GradeRequest,
    grades_submit,
    grades_wait,
)
from workers.services import job_execute

from ._lookup import task_named


class Command(BaseCommand):
    help = (
        "Grade a patch (a unified diff; '-' reads standard input) against a task's hidden tests "
        "in the sandbox, here and now, and print the grade as GET /api/v1/grades/{id} does."
    )

    def add_arguments(self, parser):
        parser.add_argument("task", help="task id or instance id")
        parser.add_argument("patch_file", help="the patch; '-' for standard input")
        parser.add_argument("--model", default="", help="the model the patch is from")
        parser.add_argument(
            "--queue",
            action="store_true",
            help="leave it to the sandbox workers instead of grading in this process",
        )

    def handle(self, *args, task, patch_file, model, queue, **options):
        item = task_named(task)
        try:
            patch = (
                sys.stdin.read()
                if patch_file == "-"
                else Path(patch_file).read_text(encoding="utf-8")
            )
        except OSError as exc:
            raise CommandError(f"cannot read {patch_file}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise CommandError(f"{patch_file} is not UTF-8 text") from None
        try:
            (submitted,) = grades_submit(
                requests=[GradeRequest(task=item, patch=patch, model=model)], limits=False
            )
        except (GradeInputError, GradeConflict) as exc:
            raise CommandError(str(exc)) from None
        grade = submitted.grade
        if not queue and grade.job_id is not None and not grade.is_finished:
            # A worker may have claimed the job first; then it is followed to its end.
            job_execute(job_id=grade.job_id)
            grades_wait(
                grade_ids=[grade.pk],
                seconds=settings.SPECLOOM_SANDBOX_WALL_SECONDS * 3,
                limited=False,
            )
        grade.refresh_from_db()
        self.stdout.write(json.dumps(grade_as_dict(grade), indent=2, ensure_ascii=False))
        if grade.status == grade.Status.FAILED:
            raise CommandError(f"grading failed: {grade.error[-500:]}")
