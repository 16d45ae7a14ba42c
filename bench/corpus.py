"""Real libraries, never seen before: how many yield verified tasks on the first try.

Downloads real pure-Python libraries' source distributions from the package index at run time
(nothing third-party is committed), imports each as a repository, and synthesizes 2 tasks per
library with the procedural engine through the real pipeline (recipe inference, jailed builds
and runs, validation) on a throw-away SQLite database.

    .venv/bin/python bench/corpus.py            # the whole corpus (about 40 min on 2 cores)
    .venv/bin/python bench/corpus.py --quick    # 3 libraries
    .venv/bin/python bench/corpus.py --only parse tabulate
    .venv/bin/python bench/corpus.py --latest   # each library's newest sdist, not the pinned one

The corpus is chosen for variety, not for success: coverage options in pytest's addopts,
versions from version control (setuptools-scm, hatch-vcs), test extras and test requirements,
unittest-style suites, tests folders without __init__.py, tests inside the package, several
build backends (setuptools, flit, hatchling, setup.py only), and one library whose sdist has no
tests. Figures: repos_total, repos_with_tests, repos_yielding (>= 1 verified task), yield_share
(= repos_yielding / repos_with_tests, target >= 0.9), tasks_attempted, tasks_verified,
median_seconds_per_task, failures (library -> the job's reason), versions (library -> the sdist's
version). The last line printed is one JSON object of the figures.

Each library is pinned to one version (the newest when it was chosen), so that figures measured
on different days compare the same code; `--latest` takes the newest instead.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

if __package__ in (None, ""):  # run as `python bench/corpus.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import note, parser, print_json_line, print_table


class Library(NamedTuple):
    version: str  # the sdist measured (--latest: the newest instead)
    trap: str  # what makes it a useful case, as found in that sdist


CORPUS = {
    "parse": Library("1.22.4", "coverage addopts; tests folder without __init__.py"),
    "tabulate": Library("0.10.0", "setuptools-scm version file; test/ without __init__.py"),
    "tomli": Library("2.5.0", "an sdist without tests (flit)"),
    "humanize": Library(
        "4.17.0", "hatch-vcs version; coverage addopts; freezegun in the test extras"
    ),
    "more-itertools": Library("11.2.1", "unittest-style suite; flit"),
    "toolz": Library("1.2.0", "tests inside the package"),
    "jmespath": Library("1.1.0", "setup.py only; tests without __init__.py"),
    "cachetools": Library("8.0.2", "setuptools-scm; coverage addopts"),
    "wcwidth": Library(
        "0.9.4", "coverage addopts; large test data; its tests require its C extension"
    ),
    "termcolor": Library("3.3.0", "hatch-vcs; coverage addopts; tests without __init__.py"),
    "inflect": Library("7.6.0", "setuptools-scm; coverage addopts; test extras"),
    "python-slugify": Library("9.2.0", "a runtime dependency (text-unidecode)"),
    "natsort": Library("8.4.0", "coverage addopts; hypothesis in the test requirements"),
    "semantic-version": Library("2.10.0", "setup.py; unittest-style suite"),
    "sqlparse": Library("0.6.1", "hatchling"),
}
QUICK = ["parse", "tabulate", "tomli"]
# Libraries no fix was ever made for (`--holdout`): a check that the causes were fixed, not the
# cases. Chosen the same way, for variety.
HOLDOUT = {
    "boltons": Library("26.2.0", "flit; a large utility library, tests/ without conftest plugins"),
    "idna": Library("3.20", "flit; large generated tables"),
    "pathspec": Library("1.1.1", "flit; tests with __init__.py"),
    "tinydb": Library("4.9.0", "hatchling/poetry; pytest fixtures"),
    "mistune": Library("3.4.0", "setuptools; tests reading fixture files"),
    "iniconfig": Library("2.3.1", "setuptools-scm; hatch-vcs; testing/ folder"),
    "decorator": Library("5.3.1", "setuptools; a single test module"),
    "voluptuous": Library("0.16.0", "tests inside the package; coverage addopts"),
    "schema": Library("0.7.8", "a single module; coverage addopts"),
    "text-unidecode": Library("1.3", "setup.py only; data files"),
    "six": Library("1.17.0", "a single module and a single test file"),
    "python-dateutil": Library(
        "4.0.0", "setuptools-scm; a test suite that needs freezegun and hypothesis"
    ),
}
COUNT = 2
SEED = 1
TARGET_YIELD_SHARE = 0.9
DEFAULT_SANDBOX = Path("/var/tmp/specloom-bench-corpus")


def pinned_version(name: str) -> str | None:
    """The version the corpus measures of `name` (None: a library outside it, the newest)."""
    library = CORPUS.get(name) or HOLDOUT.get(name)
    return library.version if library else None


def trap_of(name: str) -> str:
    library = CORPUS.get(name) or HOLDOUT.get(name)
    return library.trap if library else ""


def download_sdist(name: str, folder: Path, *, version: str | None = None) -> tuple[Path, str]:
    """The source distribution of `name` at `version` (None: the newest), as a plain file
    (nothing is run), and its version."""
    from packaging.requirements import Requirement
    from unearth import PackageFinder

    from workers.sandbox.wheelhouse import index_settings

    settings = index_settings()
    finder = PackageFinder(
        index_urls=[*(settings["index-url"][:1] or ["https://pypi.org/simple"])],
        find_links=[],
    )
    wanted = Requirement(f"{name}=={version}" if version else name)
    for package in finder.find_matches(wanted):
        if not package.link.is_wheel and not package.link.is_yanked:
            return Path(finder.download(package.link, folder)), str(package.version)
    raise RuntimeError(f"{wanted}: no source distribution on the index")


def setup_django(var_dir: Path, sandbox_root: Path) -> None:
    os.environ["SPECLOOM_VAR_DIR"] = str(var_dir)
    os.environ["SPECLOOM_SANDBOX_ROOT"] = str(sandbox_root)
    os.environ.pop("DATABASE_URL", None)
    os.environ.pop("REDIS_URL", None)
    os.environ["DJANGO_SETTINGS_MODULE"] = "specloom.settings"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def measure(name: str, sdist: Path, version: str) -> dict:
    from curation.models import Dataset, EnvironmentRecipe, Task
    from curation.services.recipes import snapshot_layout
    from curation.services.repositories import repository_import
    from curation.services.synthesis import synthesis_enqueue
    from workers.services import job_execute

    row: dict = {"library": name, "version": version, "sdist": sdist.name}
    started = time.monotonic()
    repository = repository_import(source=str(sdist), name=name)
    layout = snapshot_layout(repository, repository.default_commit)
    row["test_files"] = len(layout["test_files"])
    dataset, _ = Dataset.objects.get_or_create(name="corpus")
    job = synthesis_enqueue(repository=repository, dataset=dataset, count=COUNT, seed=SEED)
    job_execute(job_id=job.pk)
    job.refresh_from_db()
    recipe = EnvironmentRecipe.objects.filter(repository=repository).first()
    report = (job.result or {}).get("report") or {}
    tasks = list(Task.objects.filter(synthesis_job=job))
    verified = [task for task in tasks if task.validation.get("verified")]
    environment = recipe.report if recipe else {}
    row.update(
        {
            "status": job.status,
            "message": job.message,
            "environment_ok": bool(recipe and recipe.status == EnvironmentRecipe.Status.OK),
            "recipe_attempts": len(recipe.attempts) if recipe else 0,
            "tests_collected": environment.get("collected", 0),
            "tests_passing": environment.get("passed", 0),
            "files_failing_collection": len(environment.get("collection_errors", [])),
            "tasks_attempted": len(tasks),
            "tasks_verified": len(verified),
            "seconds": round(time.monotonic() - started, 1),
            "seconds_per_task": round((time.monotonic() - started) / max(1, len(tasks)), 1)
            if tasks
            else None,
            "rejections": report.get("rejected_by_reason", {}),
        }
    )
    return row


def main() -> None:
    arguments = parser(__doc__.split("\n", 1)[0])
    arguments.add_argument("--only", nargs="*", help="these libraries only")
    arguments.add_argument(
        "--holdout", action="store_true", help="the held-out libraries no fix was made for"
    )
    arguments.add_argument(
        "--latest", action="store_true", help="each library's newest sdist, not its pinned one"
    )
    arguments.add_argument("--sandbox-root", type=Path, default=DEFAULT_SANDBOX)
    args = arguments.parse_args()
    names = args.only or (list(HOLDOUT) if args.holdout else QUICK if args.quick else list(CORPUS))
    started = time.monotonic()
    rows = []
    with tempfile.TemporaryDirectory(prefix="specloom-bench-corpus-") as scratch:
        scratch_path = Path(scratch)
        setup_django(scratch_path / "var", args.sandbox_root)
        for name in names:
            version = None if args.latest else pinned_version(name)
            note(f"{name}: downloading the sdist ({version or 'the newest'})")
            try:
                sdist, version = download_sdist(name, scratch_path / "sdists", version=version)
            except Exception as exc:
                rows.append(
                    {"library": name, "version": version, "status": "failed", "message": str(exc)}
                )
                continue
            note(f"{name}: importing {sdist.name} and synthesizing {COUNT} tasks")
            try:
                rows.append(measure(name, sdist, version))
            except Exception as exc:  # an import refused is a row with its reason
                rows.append(
                    {"library": name, "version": version, "status": "failed", "message": str(exc)}
                )
            last = rows[-1]
            note(f"{name}: {last.get('tasks_verified', 0)} verified; {last['message']}")
    figures = figures_of(
        rows, quick=args.quick, latest=args.latest, seconds=time.monotonic() - started
    )
    report(rows, figures)
    print_json_line(figures)


def figures_of(rows: list[dict], *, quick: bool, latest: bool, seconds: float) -> dict:
    with_tests = [row for row in rows if row.get("test_files", 0) > 0]
    yielding = [row for row in with_tests if row.get("tasks_verified", 0) >= 1]
    per_task = [row["seconds_per_task"] for row in rows if row.get("seconds_per_task")]
    return {
        "quick": quick,
        "latest": latest,
        "repos_total": len(rows),
        "repos_with_tests": len(with_tests),
        "repos_yielding": len(yielding),
        "yield_share": round(len(yielding) / len(with_tests), 3) if with_tests else 0.0,
        "yield_share_target": TARGET_YIELD_SHARE,
        "tasks_attempted": sum(row.get("tasks_attempted", 0) for row in rows),
        "tasks_verified": sum(row.get("tasks_verified", 0) for row in rows),
        "tasks_asked": COUNT * len(rows),
        "median_seconds_per_task": round(statistics.median(per_task), 1) if per_task else None,
        "failures": {
            row["library"]: row["message"]
            for row in rows
            if row.get("tasks_verified", 0) < 1 or row.get("status") != "succeeded"
        },
        "versions": {row["library"]: row.get("version") for row in rows},
        "libraries": {row["library"]: trap_of(row["library"]) for row in rows},
        "seconds_total": round(seconds, 1),
    }


def report(rows: list[dict], figures: dict) -> None:
    print_table(
        "library: tests / environment / tasks",
        [
            (
                f"{row['library']} {row.get('version') or '-'}",
                f"test files {row.get('test_files', '-')}, "
                f"collected {row.get('tests_collected', '-')} "
                f"(passing {row.get('tests_passing', '-')}, files failing collection "
                f"{row.get('files_failing_collection', '-')}), recipe tries "
                f"{row.get('recipe_attempts', '-')}, verified {row.get('tasks_verified', 0)} of "
                f"{row.get('tasks_attempted', 0)} in {row.get('seconds', '-')} s",
            )
            for row in rows
        ],
    )
    print_table(
        "outcomes (the job's message)", [(row["library"], row.get("message", "")) for row in rows]
    )
    print_table(
        "figures",
        [
            (key, figures[key])
            for key in (
                "repos_total",
                "repos_with_tests",
                "repos_yielding",
                "yield_share",
                "tasks_attempted",
                "tasks_verified",
                "median_seconds_per_task",
            )
        ],
    )


if __name__ == "__main__":
    main()
