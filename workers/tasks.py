"""Thin Celery tasks: they take ids and call services."""

from celery import shared_task
from django.db import InterfaceError, OperationalError


@shared_task(
    name="workers.run_job",
    acks_late=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=2,
    retry_backoff_max=60,
    retry_jitter=True,
    max_retries=5,
)
def run_job(job_id: int) -> str:
    from django.db import close_old_connections

    from workers.services import job_execute

    # A worker process lives long; drop connections the database may have closed meanwhile.
    close_old_connections()
    return job_execute(job_id=job_id)


@shared_task(name="workers.reap_jobs", acks_late=True)
def reap_jobs() -> dict:
    from workers.services import job_reap

    return job_reap()


@shared_task(name="workers.sweep_sandbox", acks_late=True)
def sweep_sandbox() -> dict:
    from workers.sandbox_runtime import sandbox_sweep

    return sandbox_sweep()
