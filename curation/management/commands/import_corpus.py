"""Queue the import of many repositories from a file, and optionally wait for the table.

The file is a JSON list or JSONL, one item per repository:
    {"source": "https://github.com/owner/project.git", "commit": "v1.2", "name": "project",
     "setup": {"setup_command": "pip install .[test]", "requirements": ["pytest-cov"]}}
`source` is a git URL or a path on this machine (folder, git repository or archive). Running it
again is safe: what was imported is found, what failed is tried again.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from curation.models import Repository
from curation.selectors.repositories import status_table
from curation.services.repositories import repository_import_enqueue_batch
from curation.services.repository_sources import CLI_GIT_PROTOCOLS, request_from_item

from ._progress import follow_jobs

COLUMNS = ("name", "status", "commit", "test_files", "tests_collected", "tasks_verified", "reason")


def read_items(path: Path) -> list:
    """A JSON list, or JSONL (one item per line; blank lines and # comments skipped)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError(f"cannot read {path}: {exc}") from None
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CommandError(f"{path} is not valid JSON: {exc}") from None
        return items
    items = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            items.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise CommandError(f"{path} line {number} is not valid JSON: {exc.msg}") from None
    return items


def format_table(rows: list[dict]) -> str:
    cells = [[str(row.get(c) if row.get(c) is not None else "-") for c in COLUMNS] for row in rows]
    widths = [
        min(60, max(len(COLUMNS[i]), *(len(r[i]) for r in cells))) if cells else len(COLUMNS[i])
        for i in range(len(COLUMNS))
    ]
    lines = ["  ".join(c.ljust(w) for c, w in zip(COLUMNS, widths, strict=True)).rstrip()]
    for row in cells:
        lines.append(
            "  ".join(
                (c if len(c) <= w or i == len(COLUMNS) - 1 else c[: w - 1] + "…").ljust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
        )
    return "\n".join(lines)


class Command(BaseCommand):
    help = "Queue one import job per repository listed in FILE (JSON list or JSONL)."

    def add_arguments(self, parser):
        parser.add_argument("file", help="JSON list or JSONL of {source, commit?, name?, setup?}")
        parser.add_argument(
            "--wait", action="store_true", help="follow the jobs, then print the status table"
        )

    def handle(self, *args, file, wait, **options):
        items = read_items(Path(file))
        if not isinstance(items, list) or not items:
            raise CommandError(f"{file} holds no items (expected a JSON list or JSONL)")
        results = repository_import_enqueue_batch(
            items=items,
            # The command line is the server's operator: any path, and ssh/file URLs too.
            parse=lambda item: request_from_item(item, roots=None, protocols=CLI_GIT_PROTOCOLS),
        )
        errors = [r for r in results if r.error]
        outcomes = [r.outcome for r in results if r.outcome is not None]
        for result in errors:
            self.stderr.write(f"item {result.index + 1}: {result.error}")
        counts: dict[str, int] = {}
        for outcome in outcomes:
            counts[outcome.action] = counts.get(outcome.action, 0) + 1
        summary = ", ".join(f"{n} {action}" for action, n in sorted(counts.items())) or "nothing"
        self.stdout.write(f"{len(items)} item(s): {summary}; {len(errors)} refused")
        if wait:
            job_ids = [o.job.pk for o in outcomes if o.job is not None]
            follow_jobs(self.stdout, job_ids)
        repositories = Repository.objects.select_related("import_job").filter(
            pk__in=[o.repository.pk for o in outcomes]
        )
        rows = status_table(sorted(repositories, key=lambda r: r.name))
        self.stdout.write(format_table(rows))
        failed = [row for row in rows if row["status"] == Repository.Status.FAILED]
        if errors or (wait and failed):
            raise CommandError(f"{len(errors) + len(failed)} repository(ies) failed or refused")
