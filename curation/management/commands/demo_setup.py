"""Prepare the demo: an admin, two demo users, the sample repositories, a dataset, synthesis.

Safe to run again: it creates only what is missing, and prints a password only when it makes one.
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

SAMPLES = ("ledger", "marktext")


class Command(BaseCommand):
    help = "Create the demo's users, import the sample repositories and make a dataset."

    def handle(self, *args, **options):
        users = get_user_model()
        password = os.environ.get("SPECLOOM_ADMIN_PASSWORD") or ""
        created_accounts = []
        for username, role, superuser in (
            ("admin", "admin", True),
            ("alice", "reviewer", False),
            ("bob", "curator", False),
        ):
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
            name="demo", defaults={"description": "Tasks synthesized from the sample repositories."}
        )
        dataset.members.add(*users.objects.filter(username__in=["alice", "bob"]))

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
        for repository in Repository.objects.filter(name__in=SAMPLES):
            already = Job.objects.filter(
                kind="synthesize", target_id=str(repository.pk), params__dataset_id=dataset.pk
            ).exists()
            if not already and not dataset.tasks.filter(repository=repository).exists():
                job = synthesis_enqueue(repository=repository, dataset=dataset, count=6, seed=1)
                self.stdout.write(
                    f"Queued synthesis of 6 tasks from {repository.name} (job {job.pk})"
                )

        for username, role, secret in created_accounts:
            shown = "(from SPECLOOM_ADMIN_PASSWORD)" if password else secret
            self.stdout.write(
                self.style.WARNING(f"Created {role} {username!r} with password {shown}")
            )
