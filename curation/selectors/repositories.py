"""Reads of repositories for the status table (pages, API, the corpus command)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from curation import access
from curation.models import Repository
from workers.models import Job

IMPORT_PENDING = (Repository.Status.QUEUED, Repository.Status.IMPORTING)
LATER_STAGES = (
    Repository.Status.ENVIRONMENT_OK,
    Repository.Status.TESTS_COLLECTED,
    Repository.Status.TASKS_VERIFIED,
)


def repositories_visible(user) -> QuerySet[Repository]:
    """Curators: all; reviewers: those their visible tasks come from."""
    repositories = Repository.objects.select_related("import_job")
    if access.is_curator(user):
        return repositories
    return repositories.filter(pk__in=access.visible_tasks(user).values("repository_id"))


def repositories_listed(user) -> QuerySet[Repository]:
    return repositories_visible(user).annotate(
        task_count=Count("tasks", distinct=True),
        verified_count=Count("tasks", filter=Q(tasks__validation__verified=True), distinct=True),
    )


def get_repository_for_user(user, repository_id) -> Repository:
    from django.http import Http404

    try:
        pk = int(repository_id)
    except (TypeError, ValueError):
        raise Http404("No such repository.") from None
    repository = repositories_listed(user).filter(pk=pk).first()
    if repository is None:
        raise Http404("No such repository.")
    return repository


@dataclass(frozen=True)
class RepositoryState:
    """One row of the status table, as people read it."""

    status: str  # the stored status, or "failed" when its import job died
    importing: bool  # an import is queued or running
    imported: bool
    environment: str  # "ok" | "failed" | "" (not checked yet)
    reason: str

    @property
    def label(self) -> str:
        return self.status.replace("_", " ")


def repository_state(repository: Repository) -> RepositoryState:
    status, reason = repository.status, repository.status_reason
    job: Job | None = repository.import_job
    if (
        status in IMPORT_PENDING
        and job is not None
        and job.status
        in (
            Job.Status.FAILED,
            Job.Status.CANCELLED,
        )
    ):
        # The worker died or someone cancelled the job: the row is not really importing.
        status = Repository.Status.FAILED
        reason = reason or (
            "the import was cancelled; import it again"
            if job.status == Job.Status.CANCELLED
            else job.message.removeprefix("failed: ")
        )
    if status in LATER_STAGES:
        environment = "ok"
    elif status == Repository.Status.FAILED and repository.is_imported:
        environment = "failed"
    else:
        environment = ""
    return RepositoryState(
        status=status,
        importing=status in IMPORT_PENDING,
        imported=repository.is_imported,
        environment=environment,
        reason=reason,
    )


def status_table(repositories) -> list[dict]:
    """Plain rows for the command line and the API's batch answer."""
    rows = []
    for repository in repositories:
        state = repository_state(repository)
        rows.append(
            {
                "name": repository.name,
                "status": state.status,
                "commit": repository.default_commit[:12],
                "test_files": repository.test_files,
                "tests_collected": repository.tests_collected,
                "tasks_verified": repository.tasks_verified,
                "reason": state.reason,
            }
        )
    return rows
