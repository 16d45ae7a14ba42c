"""Tasks a benchmark author would sign: how many specs are real, tested requirements.

Synthesizes tasks through the whole pipeline (recipe, jailed runs, validation) on a throw-away
SQLite database, from the sample repositories and, unless `--quick`, from the real libraries of
`bench/corpus.py` (their pinned sdists, downloaded at run time), then reads the stored tasks as a
benchmark author would. Figures are taken over the *verified* tasks (what reviewers and releases
get):

- `median_tested_specs_per_task` (target >= 5): specs with at least one FAIL_TO_PASS test linked;
- `median_f2p_tests_per_task` (reported);
- `f2p_linked_share` (target >= 0.8): FAIL_TO_PASS tests linked to at least one spec;
- `untested_specs_counted` (target 0): specs without a FAIL_TO_PASS test that the release
  datasheet counts anyway (its own `RecordStats` over the export records);
- `example_coverage` (target >= 0.9): functions to implement whose statement section shows at
  least one example *not* taken from the hidden tests (an example none of whose code lines
  appears in the hidden test patch);
- `median_interaction_score` (target >= 0.5; a task without a score counts 0) with
  `tasks_without_interaction_test` (target 0): verified tasks none of whose FAIL_TO_PASS tests
  needs two or more parts of the solution;
- `trivial_share` (reported): verified tasks flagged trivial (their answer is visible next to
  them); null when the code measured has no such flag.

    .venv/bin/python bench/quality.py            # samples + the corpus (about an hour on 2 cores)
    .venv/bin/python bench/quality.py --quick    # the sample repositories only
    .venv/bin/python bench/quality.py --only parse tabulate   # these corpus libraries only

The last line printed is one JSON object of the figures.
"""

from __future__ import annotations

import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as `python bench/quality.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, note, parser, print_json_line, print_table
from bench.corpus import CORPUS, DEFAULT_SANDBOX, download_sdist, pinned_version, setup_django

SAMPLES = ("ledger", "marktext")
SAMPLE_COUNT = 6
QUICK_SAMPLE_COUNT = 3
CORPUS_COUNT = 2
SEED = 1
TARGETS = {
    "median_tested_specs_per_task": 5,
    "f2p_linked_share": 0.8,
    "untested_specs_counted": 0,
    "example_coverage": 0.9,
    "median_interaction_score": 0.5,
    "tasks_without_interaction_test": 0,
}
# Example lines this short ("assert x", "return 1") say nothing about where they came from.
_MIN_LINE = 12


def synthesize(name: str, source: str, count: int) -> dict:
    """One synthesis job through the pipeline; the row says what came of it."""
    from curation.models import Dataset
    from curation.services.repositories import repository_import
    from curation.services.synthesis import synthesis_enqueue
    from workers.models import Job
    from workers.services import job_execute

    started = time.monotonic()
    repository = repository_import(source=source, name=name)
    dataset, _ = Dataset.objects.get_or_create(name="quality")
    job = synthesis_enqueue(repository=repository, dataset=dataset, count=count, seed=SEED)
    job_execute(job_id=job.pk)
    job = Job.objects.get(pk=job.pk)
    return {
        "repository": name,
        "job": job.pk,
        "status": job.status,
        "message": job.message,
        "seconds": round(time.monotonic() - started, 1),
    }


def hidden_lines(test_patch: str) -> set[str]:
    return {
        line[1:].strip()
        for line in test_patch.splitlines()
        if line.startswith("+") and not line.startswith("+++")
    }


def examples_by_function(statement: str) -> dict[str, list[str]]:
    """Code of the examples the statement's "Examples" section attributes to each function.

    The section lists, per example, a line that starts with the function's name in backticks
    (then, e.g., where the example comes from) and a fenced code block.
    """
    found: dict[str, list[str]] = {}
    section = re.split(r"^## Examples[^\n]*$", statement, maxsplit=1, flags=re.M)
    if len(section) < 2:
        return found
    body = re.split(r"^## ", section[1], maxsplit=1, flags=re.M)[0]
    owner = ""
    block: list[str] | None = None
    for line in body.splitlines():
        if block is not None:
            if line.startswith("```"):
                if owner:
                    found.setdefault(owner, []).append("\n".join(block))
                block = None
            else:
                block.append(line)
            continue
        if line.startswith("```"):
            block = []
            continue
        heading = re.match(r"^(?:#+\s*)?`([^`]+)`", line)
        if heading:
            owner = heading.group(1)
    return found


def from_hidden_tests(code: str, hidden: set[str]) -> bool:
    """An example every significant line of which is in the hidden tests may be a copy of them
    (a setup line a visible test shares with hidden ones does not make it one)."""
    lines = []
    for line in code.splitlines():
        text = line.strip()
        if text.startswith((">>> ", "... ")):
            text = text[4:].strip()
        if len(text) >= _MIN_LINE and not text.startswith("#"):
            lines.append(text)
    return bool(lines) and all(line in hidden for line in lines)


def task_figures(task) -> dict:
    """One verified task, read from its rows and its export record."""
    from curation.exports.records import task_records
    from curation.models import Task
    from curation.selectors.releases import RecordStats

    record = next(task_records(Task.objects.filter(pk=task.pk)))
    stats = RecordStats()
    stats.add(record)
    counted = stats.as_dict()["specs"]
    f2p = [t for t in record["tests"] if t["role"] == "FAIL_TO_PASS"]
    tested_keys = {key for t in f2p for key in t["specs"]}
    linked = sum(1 for t in f2p if t["specs"])
    interaction_test = any(
        len(t.needs_parts or []) >= 2 for t in task.tests.all() if t.role == "FAIL_TO_PASS"
    )
    functions = (task.metadata.get("synthesis") or {}).get("functions") or []
    hidden = hidden_lines(task.test_patch)
    shown = examples_by_function(task.problem_statement)
    with_example = 0
    for fid in functions:
        qualname = fid.split("::", 1)[-1]
        names = {qualname, qualname.rsplit(".", 1)[-1]}
        examples = [code for name in names for code in shown.get(name, [])]
        if any(not from_hidden_tests(code, hidden) for code in examples):
            with_example += 1
    trivial = getattr(task, "trivial", None)
    return {
        "instance_id": task.instance_id,
        "title": task.title,
        "specs": len(record["specs"]),
        "specs_counted": counted,
        "tested_specs": len(tested_keys),
        "untested_counted": max(0, counted - len(tested_keys)),
        "f2p": len(f2p),
        "f2p_linked": linked,
        "interaction_score": task.interaction_score,
        "interaction_test": interaction_test,
        "functions": len(functions),
        "functions_with_example": with_example,
        "trivial": trivial,
    }


def median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def distribution(values: list[float]) -> dict:
    if not values:
        return {}
    ordered = sorted(values)
    quartiles = statistics.quantiles(ordered, n=4) if len(ordered) > 1 else [ordered[0]] * 3
    return {
        "min": ordered[0],
        "p25": round(quartiles[0], 2),
        "median": round(statistics.median(ordered), 2),
        "p75": round(quartiles[2], 2),
        "max": ordered[-1],
        "mean": round(statistics.mean(ordered), 2),
    }


def figures_of(rows: list[dict], tasks: list[dict], produced: int, quick: bool) -> dict:
    f2p = sum(t["f2p"] for t in tasks)
    functions = sum(t["functions"] for t in tasks)
    trivial = [t["trivial"] for t in tasks if t["trivial"] is not None]
    scores = [t["interaction_score"] or 0.0 for t in tasks]
    figures = {
        "quick": quick,
        "repos_total": len(rows),
        "repos_yielding": sum(1 for r in rows if r.get("verified", 0) > 0),
        "tasks_produced": produced,
        "tasks_verified": len(tasks),
        "median_tested_specs_per_task": median([t["tested_specs"] for t in tasks]),
        "median_f2p_tests_per_task": median([t["f2p"] for t in tasks]),
        "f2p_linked_share": round(sum(t["f2p_linked"] for t in tasks) / f2p, 3) if f2p else None,
        "untested_specs_counted": sum(t["untested_counted"] for t in tasks),
        "example_coverage": round(sum(t["functions_with_example"] for t in tasks) / functions, 3)
        if functions
        else None,
        "median_interaction_score": median(scores),
        "tasks_without_interaction_test": sum(1 for t in tasks if not t["interaction_test"]),
        "trivial_share": round(sum(trivial) / len(trivial), 3)
        if trivial and len(trivial) == len(tasks)
        else None,
        "tested_specs_per_task": distribution([t["tested_specs"] for t in tasks]),
        "specs_per_task_stored": distribution([t["specs"] for t in tasks]),
        "f2p_tests_per_task": distribution([t["f2p"] for t in tasks]),
        "interaction_score": distribution(scores),
    }
    figures["targets"] = TARGETS
    figures["targets_met"] = all(_meets(key, figures[key], goal) for key, goal in TARGETS.items())
    figures["failures"] = {
        r["repository"]: r["message"] for r in rows if not r.get("verified") and r.get("message")
    }
    return figures


def _meets(key: str, value, goal) -> bool:
    if value is None:
        return False
    if key in ("untested_specs_counted", "tasks_without_interaction_test"):
        return value <= goal
    return value >= goal


def main() -> None:
    arguments = parser(__doc__.split("\n", 1)[0])
    arguments.add_argument("--only", nargs="*", help="these corpus libraries only (no samples)")
    arguments.add_argument("--sandbox-root", type=Path, default=DEFAULT_SANDBOX)
    arguments.add_argument("--keep", type=Path, help="keep the database and storage here")
    args = arguments.parse_args()
    started = time.monotonic()
    if args.only:
        sources = [(name, None, CORPUS_COUNT) for name in args.only]
    else:
        count = QUICK_SAMPLE_COUNT if args.quick else SAMPLE_COUNT
        sources = [(name, str(ROOT / "examples" / "repos" / name), count) for name in SAMPLES]
        if not args.quick:
            sources += [(name, None, CORPUS_COUNT) for name in CORPUS]
    scratch_dir = tempfile.TemporaryDirectory(prefix="specloom-bench-quality-")
    scratch = args.keep or Path(scratch_dir.name)
    scratch.mkdir(parents=True, exist_ok=True)
    setup_django(scratch / "var", args.sandbox_root)
    from curation.models import Task

    rows, tasks, produced = [], [], 0
    for name, source, count in sources:
        try:
            if source is None:
                note(f"{name}: downloading the sdist")
                sdist, _version = download_sdist(
                    name, scratch / "sdists", version=pinned_version(name)
                )
                source = str(sdist)
            note(f"{name}: synthesizing {count} tasks")
            row = synthesize(name, source, count)
        except Exception as exc:  # a library that cannot be fetched or imported is a row
            row = {"repository": name, "status": "failed", "message": str(exc)[:500]}
            rows.append(row)
            continue
        made = list(Task.objects.filter(synthesis_job_id=row["job"]).order_by("id"))
        verified = [t for t in made if (t.validation or {}).get("verified")]
        produced += len(made)
        row["produced"], row["verified"] = len(made), len(verified)
        per_task = [task_figures(task) for task in verified]
        row["tasks"] = per_task
        tasks += per_task
        rows.append(row)
        note(f"{name}: {len(verified)} of {len(made)} verified; {row['message'][:200]}")
    figures = figures_of(rows, tasks, produced, args.quick)
    figures["seconds_total"] = round(time.monotonic() - started, 1)
    report(rows, figures)
    if args.keep is None:
        scratch_dir.cleanup()
    print_json_line(figures)


def report(rows: list[dict], figures: dict) -> None:
    for row in rows:
        print_table(
            f"{row['repository']}: {row.get('verified', 0)} of {row.get('produced', 0)} verified",
            [
                (
                    task["instance_id"],
                    f"tested specs {task['tested_specs']} (stored {task['specs']}, counted "
                    f"{task['specs_counted']}), F2P {task['f2p']} (linked {task['f2p_linked']}), "
                    f"interaction {task['interaction_score']} "
                    f"(test needing 2+ parts: {task['interaction_test']}), examples "
                    f"{task['functions_with_example']}/{task['functions']}, trivial "
                    f"{task['trivial']}",
                )
                for task in row.get("tasks", [])
            ]
            or [("message", row.get("message", ""))],
        )
    print_table(
        "figures (over verified tasks)",
        [(key, figures[key]) for key in (*TARGETS, "median_f2p_tests_per_task", "trivial_share")],
    )


if __name__ == "__main__":
    main()
