from django.core.management.base import BaseCommand, CommandError

from curation.models import Repository, Task
from curation.services.validation import ValidationNotAllowed, task_validation_enqueue

from ._lookup import task_named
from ._progress import follow_jobs


class Command(BaseCommand):
    help = "Validate tasks in the sandbox: FAIL_TO_PASS/PASS_TO_PASS, flaky tests, interaction."

    def add_arguments(self, parser):
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--task", help="task id or instance id")
        target.add_argument("--repo", help="validate every draft task of this repository")
        parser.add_argument("--reruns", type=int, help="runs per side (default: the dataset's)")
        parser.add_argument("--wait", action="store_true", help="follow the jobs to their end")

    def handle(self, *args, task, repo, reruns, wait, **options):
        if reruns is not None and reruns < 1:
            raise CommandError("--reruns must be at least 1")
        if task:
            tasks = [task_named(task)]
        else:
            repository = Repository.objects.filter(name=repo).first()
            if repository is None:
                raise CommandError(f"no repository named {repo!r}")
            tasks = list(
                repository.tasks.filter(
                    status__in=[Task.Status.DRAFT, Task.Status.CHANGES_REQUESTED]
                )
            )
            if not tasks:
                raise CommandError(f"{repo} has no draft tasks to validate")
        jobs = []
        for item in tasks:
            try:
                jobs.append(task_validation_enqueue(task=item, reruns=reruns))
            except ValidationNotAllowed as exc:
                self.stderr.write(f"{item.instance_id}: {exc}")
        self.stdout.write(
            f"Queued {len(jobs)} validation job(s): {', '.join(str(j.pk) for j in jobs)}"
        )
        if wait and jobs:
            finished = follow_jobs(self.stdout, [j.pk for j in jobs])
            for job in finished:
                self.stdout.write(
                    f"job {job.pk}: {job.status}: {job.result.get('message') or job.error[-300:]}"
                )
            if any(job.status != "succeeded" for job in finished):
                raise CommandError("some validation jobs failed")
