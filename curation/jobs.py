"""Job handlers of the curation domain: thin glue from a Job row to a service."""

from workers.registry import job_handler


@job_handler("validate_task", queue="sandbox")
def validate_task(job, ctx):
    from curation.services.validation import task_validation_run

    return task_validation_run(job=job, ctx=ctx)
