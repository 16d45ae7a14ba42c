"""Prepare the demo: an admin, demo users, the sample repositories, a dataset, and queued work
that fills it: synthesis, then trajectories from three models (evaluated) and seeded reviews.

Safe to run again: it creates only what is missing, and prints a password only when it makes
one. Nothing long runs here (the server must start quickly): the work is queued as jobs.
"""

import os
import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand

from curation.models import Dataset, Repository
from curation.services.repositories import repository_import
from curation.services.synthesis import synthesis_enqueue
from workers.models import Job
from workers.services import job_enqueue

SAMPLES = ("ledger", "marktext")
ACCOUNTS = (
    ("admin", "admin", True),
    ("alice", "reviewer", False),
    ("bob", "curator", False),
    ("dave", "reviewer", False),
)
# The demo's two reviewers: their seeded reviews give agreement and adjudication real numbers.
REVIEWERS = ["alice", "dave"]


class Command(BaseCommand):
    help = "Create the demo's users, import the sample repositories, queue the demo's data."

    def handle(self, *args, **options):
        users = get_user_model()
        password = os.environ.get("SPECLOOM_ADMIN_PASSWORD") or ""
        created_accounts = []
        for username, role, superuser in ACCOUNTS:
            if users.objects.filter(username=username).exists():
                continue
            secret = password or secrets.token_urlsafe(12)
            user = users.objects.create_user(
                username=username,
                password=secret,
                is_staff=superuser or role == "curator",
                is_superuser=superuser,
            )
            user.groups.add(Group.objects.get(name=role))
            created_accounts.append((username, role, secret))

        dataset, _ = Dataset.objects.get_or_create(
            name="demo",
            defaults={
                "description": "Tasks synthesized from the sample repositories; every task "
                "needs two reviews.",
                "reviews_required": 2,
            },
        )
        dataset.members.add(*users.objects.filter(username__in=["alice", "bob", "dave"]))

        examples = Path(settings.BASE_DIR) / "examples" / "repos"
        for name in SAMPLES:
            if Repository.objects.filter(name=name).exists():
                continue
            repo = repository_import(source=str(examples / name), name=name)
            self.stdout.write(
                f"Imported sample repository {repo.name} at {repo.default_commit[:12]}"
            )

        # Fill the demo with tasks the way a curator would: a synthesis run per repository,
        # picked up by the demo's worker (tasks appear as each one validates).
        synthesis_jobs = []
        for repository in Repository.objects.filter(name__in=SAMPLES):
            earlier = Job.objects.filter(
                kind="synthesize", target_id=str(repository.pk), params__dataset_id=dataset.pk
            ).first()
            if earlier is not None:
                synthesis_jobs.append(earlier.pk)
            elif not dataset.tasks.filter(repository=repository).exists():
                job = synthesis_enqueue(repository=repository, dataset=dataset, count=6, seed=1)
                synthesis_jobs.append(job.pk)
                self.stdout.write(
                    f"Queued synthesis of 6 tasks from {repository.name} (job {job.pk})"
                )

        # Then trajectories from three models and two reviewers' reviews, once tasks exist.
        seeded = (
            Job.objects.filter(kind="demo_seed", params__dataset_id=dataset.pk)
            .exclude(status__in=[Job.Status.FAILED, Job.Status.CANCELLED])
            .exists()
        )
        if not seeded:
            job = job_enqueue(
                kind="demo_seed",
                target=dataset,
                params={"dataset_id": dataset.pk, "after": synthesis_jobs, "reviewers": REVIEWERS},
                message="waiting for the demo's synthesis",
            )
            self.stdout.write(
                f"Queued the demo's trajectories and reviews (job {job.pk}, after the synthesis)"
            )

        for username, role, secret in created_accounts:
            shown = "(from SPECLOOM_ADMIN_PASSWORD)" if password else secret
            self.stdout.write(
                self.style.WARNING(f"Created {role} {username!r} with password {shown}")
            )
