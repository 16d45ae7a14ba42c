from django.core.management.base import BaseCommand, CommandError

from curation.models import Dataset, Repository
from curation.services.synthesis import SynthesisInputError, format_report, synthesis_enqueue

from ._progress import follow_jobs


class Command(BaseCommand):
    help = "Synthesize tasks of interdependent specifications from a repository, then validate."

    def add_arguments(self, parser):
        parser.add_argument("--repo", required=True, help="repository name")
        parser.add_argument("--engine", default="procedural", choices=["procedural", "llm"])
        parser.add_argument("--count", type=int, default=10)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--dataset", default="default", help="dataset (created if missing)")
        parser.add_argument("--llm-base-url", help="OpenAI-compatible endpoint (llm engine)")
        parser.add_argument("--llm-model", help="model name (llm engine)")
        parser.add_argument("--llm-rounds", type=int, default=3, help="revision rounds (llm)")
        parser.add_argument("--wait", action="store_true", help="follow the job, print the report")

    def handle(self, *args, repo, engine, count, seed, dataset, wait, **options):
        repository = Repository.objects.filter(name=repo).first()
        if repository is None:
            raise CommandError(f"no repository named {repo!r}")
        target, _ = Dataset.objects.get_or_create(name=dataset)
        try:
            job = synthesis_enqueue(
                repository=repository,
                dataset=target,
                engine=engine,
                count=count,
                seed=seed,
                llm={
                    "base_url": options["llm_base_url"],
                    "model": options["llm_model"],
                    "rounds": options["llm_rounds"],
                },
            )
        except SynthesisInputError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Queued synthesis job {job.pk} on the synthesis queue.")
        if not wait:
            return
        finished = follow_jobs(self.stdout, [job.pk])[0]
        report = (finished.result or {}).get("report")
        if report:
            self.stdout.write(format_report(report))
        if finished.status != "succeeded":
            # A run that verified nothing says why and how to fix it, and exits non-zero.
            raise CommandError(f"synthesis job {job.pk} {finished.status}: {finished.message}")
        self.stdout.write(finished.message)
