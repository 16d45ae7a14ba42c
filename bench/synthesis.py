"""Synthesis + validation on both sample repositories: how many tasks verify, how coupled.

Runs the real pipeline (synthesis job -> stored tasks -> sandbox validation) against a
throw-away SQLite database and sandbox folder, and checks the issue's targets:
  >= 70% of procedural tasks verify; every verified task has >= 2 specs, >= 1 observed
  dependency edge and >= 1 FAIL_TO_PASS test needing >= 2 parts of the solution; no flaky
  test in a verified task; >= 10 tasks per sample repository; <= 30 s per task.

    python bench/synthesis.py            # both repositories, 12 tasks each
    python bench/synthesis.py --quick    # one repository, 2 tasks (within a minute, warm)

The last line printed is one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _setup_django(var_dir: Path) -> None:
    os.environ["SPECLOOM_VAR_DIR"] = str(var_dir)
    os.environ.pop("DATABASE_URL", None)
    os.environ.pop("REDIS_URL", None)
    os.environ["DJANGO_SETTINGS_MODULE"] = "specloom.settings"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _measure(repo_name: str, count: int, seed: int) -> dict:
    from curation.models import Dataset, Task
    from curation.services.repositories import repository_import
    from curation.services.synthesis import format_report, synthesis_enqueue
    from workers.services import job_execute

    repository = repository_import(source=str(ROOT / "examples" / "repos" / repo_name))
    dataset, _ = Dataset.objects.get_or_create(name="bench")
    job = synthesis_enqueue(repository=repository, dataset=dataset, count=count, seed=seed)
    started = time.monotonic()
    outcome = job_execute(job_id=job.pk)
    seconds = time.monotonic() - started
    job.refresh_from_db()
    if outcome != "succeeded":
        raise SystemExit(f"synthesis of {repo_name} {outcome}: {job.error[-2000:]}")
    report = job.result["report"]
    print(f"--- {repo_name} ---")
    print(format_report(report))

    tasks = list(Task.objects.filter(synthesis_job=job).prefetch_related("specs", "tests"))
    verified = [t for t in tasks if t.validation.get("verified")]
    failing_checks = []
    for task in verified:
        checks = {
            "two_or_more_specs": task.specs.count() >= 2,
            "observed_edge": task.dependencies.filter(evidence="observed").exists(),
            "multi_part_fail_to_pass": any(
                len(t.needs_parts) >= 2 for t in task.tests.all() if t.role == "FAIL_TO_PASS"
            ),
            "no_flaky_test": not any(t.role == "flaky" for t in task.tests.all()),
        }
        failing_checks += [f"{task.instance_id}: {name}" for name, ok in checks.items() if not ok]
    return {
        "repository": repo_name,
        "tasks": len(tasks),
        "verified": len(verified),
        "verified_share": report["verified_share"],
        "verified_tasks_failing_a_check": failing_checks,
        "mean_specs_per_task": report["mean_specs_per_task"],
        "declared_edges": report["dependency_edges"]["declared"],
        "observed_edges": report["dependency_edges"]["observed"],
        "fail_to_pass": report["fail_to_pass"],
        "pass_to_pass": report["pass_to_pass"],
        "interaction_score_mean": report["interaction_score_mean"],
        "rejected_by_reason": report["rejected_by_reason"],
        "seconds_per_task": round(seconds / max(1, len(tasks)), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repository, 2 tasks")
    parser.add_argument("--count", type=int, default=None, help="tasks per repository")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    count = args.count or (2 if args.quick else 12)
    repos = ["marktext"] if args.quick else ["ledger", "marktext"]

    with tempfile.TemporaryDirectory(prefix="specloom-bench-synthesis-") as scratch:
        _setup_django(Path(scratch))
        results = [_measure(name, count, args.seed) for name in repos]

    figures = {
        "quick": args.quick,
        "tasks_requested_per_repository": count,
        "repositories": results,
        "tasks_total": sum(r["tasks"] for r in results),
        "verified_share_min": min(r["verified_share"] for r in results),
        "min_tasks_per_repository": min(r["tasks"] for r in results),
        "verified_tasks_failing_a_check": sum(
            len(r["verified_tasks_failing_a_check"]) for r in results
        ),
        "seconds_per_task_max": max(r["seconds_per_task"] for r in results),
        "targets": {
            "verified_share_min": 0.7,
            "min_tasks_per_repository": 10,
            "verified_tasks_failing_a_check": 0,
            "seconds_per_task_max": 30,
        },
    }
    print()
    print(
        f"{'repository':12} {'tasks':>5} {'verified':>8} {'s/task':>7} {'observed':>8} {'score':>6}"
    )
    for r in results:
        print(
            f"{r['repository']:12} {r['tasks']:5d} {r['verified']:8d} {r['seconds_per_task']:7.1f} "
            f"{r['observed_edges']:8d} {r['interaction_score_mean'] or 0:6.3f}"
        )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
