"""Job handlers of the curation domain: thin glue from a Job row to a service."""

from workers.registry import job_handler


@job_handler("validate_task", queue="sandbox")
def validate_task(job, ctx):
    from curation.services.validation import task_validation_run

    return task_validation_run(job=job, ctx=ctx)


@job_handler("synthesize", queue="synthesis", max_attempts=2)
def synthesize(job, ctx):
    from curation.services.synthesis import synthesis_run

    return synthesis_run(job=job, ctx=ctx)
