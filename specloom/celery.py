"""The Celery application. Tasks live in workers/tasks.py and carry only job ids."""

import os

from celery import Celery
from celery.signals import worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "specloom.settings")

app = Celery("specloom")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["workers"])


@worker_ready.connect
def _sweep_sandbox_at_start(**_kwargs) -> None:
    # What a worker killed before this start left behind (jailed processes, cgroups, run
    # folders) goes now, not at the next beat.
    from workers.tasks import sweep_sandbox

    sweep_sandbox.delay()
