"""Job handlers of the curation domain: thin glue from a Job row to a service."""

from workers.registry import job_handler


def _synthesis_abandoned(job):
    from curation.services.synthesis import synthesis_discard_unfinished

    synthesis_discard_unfinished(job)


def _validation_abandoned(job):
    from curation.models import Task
    from curation.services.validation import task_validation_abandon

    task = Task.objects.filter(pk=job.params.get("task_id")).first()
    if task is not None:
        task_validation_abandon(
            task=task,
            revision=job.params.get("revision", task.revision),
            reason="the worker running the validation was lost",
            job=job,
        )


@job_handler("validate_task", queue="sandbox", on_abandoned=_validation_abandoned)
def validate_task(job, ctx):
    from curation.services.validation import task_validation_run

    return task_validation_run(job=job, ctx=ctx)


@job_handler("prepare_environment", queue="sandbox", max_attempts=2)
def prepare_environment(job, ctx):
    from curation.services.recipes import recipe_prepare_run

    return recipe_prepare_run(job=job, ctx=ctx)


@job_handler("synthesize", queue="synthesis", max_attempts=2, on_abandoned=_synthesis_abandoned)
def synthesize(job, ctx):
    from curation.models import Repository
    from curation.services.repositories import (
        RepositoryNotReady,
        repository_check_usable,
        repository_note_synthesis,
    )
    from curation.services.synthesis import synthesis_run
    from workers.services import JobFailed

    repository = Repository.objects.get(pk=job.params["repository_id"])
    try:
        repository_check_usable(repository)
    except RepositoryNotReady as exc:
        raise JobFailed(str(exc)) from None
    result = synthesis_run(job=job, ctx=ctx)
    repository_note_synthesis(repository=repository)
    return result


# A clone can take minutes and needs no sandbox: the default queue.
@job_handler("import_repository", queue="default", max_attempts=2)
def import_repository(job, ctx):
    from curation.services.repositories import repository_import_run

    return repository_import_run(job=job, ctx=ctx)


@job_handler("cut_release", queue="default")
def cut_release(job, ctx):
    from curation.services.releases import release_build_run

    return release_build_run(job=job, ctx=ctx)


# The handler retries the POST itself, with backoff; a job re-run by the reaper (worker lost)
# sends the same delivery id again, so receivers can drop the duplicate (at-least-once).
@job_handler("deliver_webhook", queue="default")
def deliver_webhook(job, ctx):
    from curation.services.webhooks import webhook_deliver

    return webhook_deliver(job=job, ctx=ctx)


@job_handler("evaluate_trajectory", queue="sandbox")
def evaluate_trajectory(job, ctx):
    from curation.services.evaluation import trajectory_evaluation_run

    return trajectory_evaluation_run(job=job, ctx=ctx)


@job_handler("audit_task", queue="default")
def audit_task(job, ctx):
    from curation.services.audit import task_audit_run

    return task_audit_run(job=job, ctx=ctx)


# Waits for the demo's synthesis jobs, then imports the demo's trajectories (see the service).
@job_handler("demo_seed", queue="synthesis", max_attempts=2)
def demo_seed(job, ctx):
    from curation.services.demo import demo_seed_run

    return demo_seed_run(job=job, ctx=ctx)


def _grades_abandoned(job):
    from curation.services.grading import grade_group_abandoned

    grade_group_abandoned(job)


# Patches of one task graded together, in the jail, on the task's cached environment.
@job_handler("grade_patches", queue="sandbox", on_abandoned=_grades_abandoned)
def grade_patches(job, ctx):
    from curation.services.grading import grade_group_run

    return grade_group_run(job=job, ctx=ctx)
