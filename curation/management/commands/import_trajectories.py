from django.core.management.base import BaseCommand, CommandError

from curation.ingest import FORMATS
from curation.services.trajectories import ImportRefused, trajectories_import_file

from ._lookup import dataset_named, task_named


class Command(BaseCommand):
    help = (
        "Import agent trajectories (Specloom JSON/JSONL, SWE-agent .traj, OpenHands events, "
        "evaluation or resolver output, SWE-bench predictions) and queue their evaluation."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="the file to import")
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--task", help="attach every record to this task (id or instance id)")
        target.add_argument(
            "--dataset", help="match records to this dataset's tasks by their instance id"
        )
        parser.add_argument(
            "--model", help="the model that ran them; overrides any model the file names"
        )
        parser.add_argument(
            "--format", default="auto", choices=["auto", *FORMATS], help="default: detect it"
        )
        parser.add_argument(
            "--no-evaluate", action="store_true", help="import only; do not queue evaluations"
        )

    def handle(self, *args, file, task, dataset, model, format, no_evaluate, **options):
        target_task = task_named(task) if task else None
        target_dataset = None if task else dataset_named(dataset)
        try:
            report = trajectories_import_file(
                path=file,
                fmt=format,
                task=target_task,
                dataset=target_dataset,
                model=model,
                evaluate=not no_evaluate,
            )
        except ImportRefused as exc:
            raise CommandError(str(exc)) from None
        except OSError as exc:
            raise CommandError(f"cannot read {file}: {exc.strerror or exc}") from None

        def where(entry) -> str:
            if entry["line"] is None:
                return "file"
            return f"{'item' if report.located_by == 'index' else 'line'} {entry['line']}"

        for entry in report.created:
            self.stdout.write(
                f"{where(entry)}: created trajectory {entry['id']}: {entry['model']} on "
                f"{entry['instance_id']}, {entry['steps']} steps"
            )
        for entry in report.duplicates:
            self.stdout.write(f"{where(entry)}: already imported as trajectory {entry['id']}")
        for entry in report.errors:
            self.stderr.write(f"{where(entry)}: {entry['message']}")
        if report.error_count > len(report.errors):
            self.stderr.write(f"... and {report.error_count - len(report.errors)} more errors")
        self.stdout.write(
            f"{report.format}: {len(report.created)} created ({report.steps} steps), "
            f"{len(report.duplicates)} already imported, {report.error_count} errors"
            + ("" if no_evaluate or not report.created else "; evaluations queued")
        )
        if report.errors and not report.created and not report.duplicates:
            raise CommandError("nothing was imported")
