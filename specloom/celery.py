"""The Celery application. Tasks live in workers/tasks.py and carry only job ids."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "specloom.settings")

app = Celery("specloom")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["workers"])
