from django.core.management.base import BaseCommand, CommandError

from curation.models import Release
from curation.services.releases import ReleaseInputError, release_cut
from workers.services import job_execute

from ._lookup import dataset_named
from ._progress import follow_jobs


class Command(BaseCommand):
    help = "Cut an immutable release of a dataset's approved tasks (runs as a job)."

    def create_parser(self, prog_name, subcommand, **kwargs):
        # `--version` names the release here (the interface), replacing Django's.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("dataset", help="dataset name or id")
        parser.add_argument("--version", help="version name (default: the next vN)")
        parser.add_argument(
            "--with-trajectories",
            action="store_true",
            help="put trajectories and their evaluations in the specloom export",
        )
        parser.add_argument(
            "--include-unsafe",
            action="store_true",
            help="keep trajectories the review agent flagged unsafe (with --with-trajectories)",
        )
        parser.add_argument(
            "--queue",
            action="store_true",
            help="only queue the job for a worker and follow it, instead of running it here",
        )

    def handle(self, *args, dataset, version, with_trajectories, include_unsafe, queue, **options):
        found = dataset_named(dataset)
        try:
            release = release_cut(
                dataset=found,
                version=version,
                trajectories=with_trajectories,
                include_unsafe=include_unsafe,
            )
        except ReleaseInputError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Cutting {release} (job {release.job_id})")
        if queue:
            follow_jobs(self.stdout, [release.job_id])
        else:
            # The command is the worker: the job row records the cut like any other job.
            job_execute(job_id=release.job_id)
        release.refresh_from_db()
        release.job.refresh_from_db()
        if release.status != Release.Status.READY:
            raise CommandError(
                f"{release} is {release.status}: {release.job.error[-1000:] or release.job.message}"
            )
        self.stdout.write(
            self.style.SUCCESS(
                f"{release} is ready: {len(release.manifest)} tasks, "
                f"manifest sha256 {release.manifest_sha256}"
            )
        )
        for fmt, meta in release.files.items():
            self.stdout.write(f"  {fmt:<9} {meta['bytes']:>12,} bytes  sha256 {meta['sha256']}")
