"""Export benchmark: the streaming JSONL export against DRF's ModelSerializer, on PostgreSQL.

    .venv/bin/python bench/export.py [--quick] [--database-url postgres://...]

It creates (drops and re-creates) its own PostgreSQL database, default
postgres://postgres@127.0.0.1:5432/specloom_bench_export, migrates it, seeds tasks with
`bulk_create` (each with 4 specs, 2 dependencies, 6 tests linked to specs, and patches and a
statement of realistic size), and at each size (10,000 and 100,000 tasks; `--quick`: 1,000 and
3,000) measures, each in a fresh Python process so that peak RSS belongs to one path only:

(a) `stream`: `GET /api/v1/tasks/export?format=specloom` through the real view (Django's test
    client, a read token), reading the streamed body chunk by chunk and throwing it away:
    MB/s, tasks/s, and peak RSS over the process's RSS before the request;
(b) `drf`: the obvious way, `JSONRenderer().render(TaskSerializer(qs, many=True).data)` with
    the API's own nested serializer and its prefetches: MB/s, tasks/s, peak RSS likewise. At
    the large size only when the machine has 12 GB available (it holds every task in memory);
    `--quick` measures it at the small size only.

Targets: (a) at least 10x the throughput of (b); the peak RSS of (a) growing by less than
50 MB from the small size to the large one. The last line of standard output is one JSON
object of the figures.
"""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as `python bench/export.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import note, parser, print_json_line, print_table, stopwatch

DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/specloom_bench_export"
SPEEDUP_TARGET = 10
RSS_GROWTH_TARGET_MB = 50
DRF_LARGE_NEEDS_GB = 12
ROUNDS = 3
SPECS_PER_TASK = 4
TESTS_PER_TASK = 6
SEED_BATCH = 2000
KINDS = ["functional", "interface", "error-handling", "security", "performance"]
WORDS = [
    *(
        [
            "allocate",
            "reserve",
            "location",
            "stock",
            "quantity",
            "order",
            "raise",
            "error",
            "short",
            "plan",
            "fullest",
        ]
    ),
    *(
        [
            "ties",
            "name",
            "return",
            "list",
            "pair",
            "positive",
            "value",
            "interface",
            "contract",
            "budget",
            "secure",
        ]
    ),
]


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _current_rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 1024 / 1024


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _patch(rng: random.Random, path: str, lines: int) -> str:
    body = "\n".join(f"+    value_{i} = compute({_text(rng, 4)!r})" for i in range(lines))
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -10,3 +10,{lines + 3} @@\n def allocate(self, order, sku, quantity):\n"
        f"-    raise NotImplementedError\n{body}\n"
    )


def _setup_django(database_url: str) -> None:
    os.environ.update(
        {
            "DATABASE_URL": database_url,
            "SPECLOOM_DEBUG": "0",  # DEBUG would keep every query in memory
            "DJANGO_SETTINGS_MODULE": "specloom.settings",
        }
    )
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()


def _create_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1].split("?", 1)[0]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')


def _seed(total: int, start: int, rng: random.Random) -> None:
    """Grow the bench dataset to `total` tasks, in batches of bulk_create."""
    from curation.models import (
        Dataset,
        Repository,
        SpecDependency,
        Specification,
        Task,
        TestCase,
    )

    dataset = Dataset.objects.get(name="bench")
    repositories = list(Repository.objects.order_by("id"))
    statement = _text(rng, 220)  # ~1.5 KB, the size of a synthesized statement
    for first in range(start, total, SEED_BATCH):
        numbers = range(first + 1, min(total, first + SEED_BATCH) + 1)
        tasks = Task.objects.bulk_create(
            Task(
                repository=repositories[n % len(repositories)],
                dataset=dataset,
                number=n,
                instance_id=f"specloom__{repositories[n % len(repositories)].name}-{n}",
                base_commit=f"{n:040x}",
                title=f"Implement allocate and _allocation_plan ({n})",
                problem_statement=f"# Task {n}\n\n{statement}",
                status=Task.Status.APPROVED,
                origin=rng.choice(["procedural", "llm"]),
                difficulty=rng.choice(["<15m", "15m-1h", "1-4h"]),
                interaction_score=round(rng.random(), 3),
                reference_patch=_patch(rng, "src/ledger/reservations.py", 30),
                test_patch=_patch(rng, "tests/test_allocation_spec.py", 24),
            )
            for n in numbers
        )
        specs = Specification.objects.bulk_create(
            Specification(
                task=task,
                key=f"S{k + 1}",
                kind=KINDS[k % len(KINDS)],
                statement=_text(rng, 30),
                rationale=_text(rng, 10),
                order=k,
            )
            for task in tasks
            for k in range(SPECS_PER_TASK)
        )
        by_task: dict[int, list] = {}
        for spec in specs:
            by_task.setdefault(spec.task_id, []).append(spec)
        SpecDependency.objects.bulk_create(
            SpecDependency(
                task_id=task_id,
                from_spec=own[a],
                to_spec=own[b],
                relation="constrains",
                evidence="declared",
            )
            for task_id, own in by_task.items()
            for a, b in ((0, 3), (1, 3))
        )
        tests = TestCase.objects.bulk_create(
            TestCase(
                task=task,
                nodeid=f"tests/test_allocation_spec.py::test_case_{t}[param {t} \\xe9]",
                intended_role="FAIL_TO_PASS" if t < 4 else "PASS_TO_PASS",
                role="FAIL_TO_PASS" if t < 4 else "PASS_TO_PASS",
            )
            for task in tasks
            for t in range(TESTS_PER_TASK)
        )
        Link = TestCase.specs.through
        Link.objects.bulk_create(
            Link(testcase_id=test.pk, specification_id=by_task[test.task_id][i % SPECS_PER_TASK].pk)
            for test in tests
            for i in range(1 + (test.pk % 2))
        )
        note(f"  seeded {numbers[-1]:,} tasks")


def _measure(path: str, database_url: str) -> dict:
    """One measurement in this (fresh) process; returns its figures."""
    _setup_django(database_url)
    from django.db import connection
    from django.test import Client

    from curation.models import ApiToken, Task

    token_key = os.environ["BENCH_TOKEN"]
    tasks = Task.objects.count()
    connection.ensure_connection()
    # Both paths are warmed up on one task first: imports, the URL configuration, the token's
    # first use and the first queries are start-up costs, not throughput.
    first = Task.objects.order_by("id").values_list("instance_id", flat=True).first()
    if path == "drf":
        from rest_framework.renderers import JSONRenderer

        from curation.api.tasks import TaskSerializer, task_queryset

        JSONRenderer().render(TaskSerializer(task_queryset()[:1], many=True).data)
    else:
        warm = Client().get(
            f"/api/v1/tasks/export?format=specloom&instance_id={first}",
            HTTP_AUTHORIZATION=f"Bearer {token_key}",
        )
        assert b"".join(warm.streaming_content).count(b"\n") == 1
    assert ApiToken.objects.filter(revoked_at__isnull=True).exists()
    baseline = _current_rss_mb()
    started = time.perf_counter()
    cpu = time.process_time()
    lines = 0
    size = 0
    if path == "stream":
        response = Client().get(
            "/api/v1/tasks/export?format=specloom",
            HTTP_AUTHORIZATION=f"Bearer {token_key}",
        )
        assert response.status_code == 200, response.status_code
        for chunk in response.streaming_content:
            size += len(chunk)
            lines += chunk.count(b"\n")
        response.close()
    else:
        body = JSONRenderer().render(TaskSerializer(task_queryset(), many=True).data)
        size = len(body)
        lines = body.count(b'"instance_id"')
        del body
    seconds = time.perf_counter() - started
    return {
        "path": path,
        "tasks": tasks,
        "records": lines,
        "bytes": size,
        "seconds": round(seconds, 3),
        "cpu_seconds": round(time.process_time() - cpu, 3),
        "mb_per_second": round(size / 1024 / 1024 / seconds, 2),
        "tasks_per_second": round(tasks / seconds),
        "tasks_per_cpu_second": round(tasks / max(time.process_time() - cpu, 1e-9)),
        "rss_before_mb": round(baseline, 1),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        "peak_rss_growth_mb": round(_peak_rss_mb() - baseline, 1),
    }


def _run_measurement(path: str, database_url: str, token_key: str) -> dict:
    environment = {**os.environ, "BENCH_TOKEN": token_key}
    result = subprocess.run(
        [sys.executable, __file__, "--measure", path, "--database-url", database_url],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"measurement {path} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    options = parser(__doc__.split("\n", 1)[0])
    options.add_argument("--database-url", default=DEFAULT_DATABASE)
    options.add_argument("--measure", choices=["stream", "drf"], help=argparse_hidden())
    args = options.parse_args()
    if not args.database_url.startswith("postgres"):
        raise SystemExit("the benchmark measures PostgreSQL: give a postgres:// URL")
    if args.measure:
        print(json.dumps(_measure(args.measure, args.database_url)))
        return

    small, large = (1_000, 3_000) if args.quick else (10_000, 100_000)
    import psutil

    available_gb = psutil.virtual_memory().available / 1024**3
    drf_sizes = [small] if args.quick or available_gb < DRF_LARGE_NEEDS_GB else [small, large]
    os.environ["SPECLOOM_VAR_DIR"] = tempfile.mkdtemp(prefix="specloom-bench-export-")
    note(f"creating {args.database_url}")
    _create_database(args.database_url)
    _setup_django(args.database_url)
    from django.core.management import call_command

    from curation.models import Dataset, Repository
    from curation.services.tokens import api_token_create
    from tests.factories import UserFactory

    with stopwatch() as took:
        call_command("migrate", verbosity=0)
    note(f"migrated in {took[0]:.1f}s")
    user = UserFactory(username="pipeline", roles=["curator"], password=None)
    _token, key = api_token_create(user=user, name="bench", scopes=["read"])
    Dataset.objects.create(name="bench")
    for name in ("ledger", "marktext", "tablet"):
        Repository.objects.create(
            name=name, source_kind="path", source="/nowhere", git_path=f"repos/{name}.git"
        )

    rng = random.Random(20260601)
    load_before = os.getloadavg()[0]
    results: dict[int, dict[str, dict]] = {}
    seeded = 0
    for size in (small, large):
        note(f"seeding {size:,} tasks")
        with stopwatch() as took:
            _seed(size, seeded, rng)
        seeded = size
        note(f"seeded in {took[0]:.1f}s; VACUUM ANALYZE")
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
        connection.close()  # the measurement processes open their own
        rounds: dict[str, list[dict]] = {"stream": [], "drf": []}
        # Interleaved rounds, so that a burst of load elsewhere on the machine slows both paths
        # alike; the figures are those of the median round. The DRF path holds every task in
        # memory: one round at the large size.
        for round_number in range(ROUNDS):
            for path in ("stream", "drf"):
                if path == "drf" and (size not in drf_sizes or (size == large and round_number)):
                    continue
                note(f"measuring {path} at {size:,} tasks (round {round_number + 1})")
                figures = _run_measurement(path, args.database_url, key)
                if figures["records"] != size:
                    raise SystemExit(f"{path} exported {figures['records']} of {size} tasks")
                note(
                    f"  {figures['mb_per_second']} MB/s, {figures['tasks_per_second']} tasks/s, "
                    f"peak RSS +{figures['peak_rss_growth_mb']} MB"
                )
                rounds[path].append(figures)
        results[size] = {}
        for path, measured in rounds.items():
            if measured:
                ordered = sorted(measured, key=lambda r: r["mb_per_second"])
                results[size][path] = {
                    **ordered[len(ordered) // 2],
                    "rounds_mb_per_second": [r["mb_per_second"] for r in measured],
                }
    load_after = os.getloadavg()[0]

    def speedup(size: int) -> float:
        stream, drf = results[size]["stream"], results[size]["drf"]
        return round(stream["mb_per_second"] / drf["mb_per_second"], 1)

    def growth(size: int, path: str) -> float | None:
        return results[size][path]["peak_rss_growth_mb"] if path in results[size] else None

    stream_growth = round(growth(large, "stream") - growth(small, "stream"), 1)
    speedups = {size: speedup(size) for size in drf_sizes}
    figures = {
        "database": "postgresql",
        "sizes": [small, large],
        "drf_measured_at": drf_sizes,
        "export_mb": {
            str(size): round(results[size]["stream"]["bytes"] / 1024 / 1024, 1)
            for size in (small, large)
        },
    }
    for size in (small, large):
        stream = results[size]["stream"]
        figures[f"stream_mb_per_second_{size}"] = stream["mb_per_second"]
        figures[f"stream_mb_per_second_rounds_{size}"] = stream["rounds_mb_per_second"]
        figures[f"stream_tasks_per_second_{size}"] = stream["tasks_per_second"]
        figures[f"stream_peak_rss_growth_mb_{size}"] = stream["peak_rss_growth_mb"]
        figures[f"stream_peak_rss_mb_{size}"] = stream["peak_rss_mb"]
    figures["stream_peak_rss_growth_small_to_large_mb"] = stream_growth
    for size in drf_sizes:
        drf, stream = results[size]["drf"], results[size]["stream"]
        figures[f"drf_mb_per_second_{size}"] = drf["mb_per_second"]
        figures[f"drf_mb_per_second_rounds_{size}"] = drf["rounds_mb_per_second"]
        figures[f"drf_tasks_per_second_{size}"] = drf["tasks_per_second"]
        figures[f"drf_peak_rss_growth_mb_{size}"] = drf["peak_rss_growth_mb"]
        figures[f"speedup_{size}"] = speedups[size]
        # This process's CPU only (the database server's is not in it, for either path): on a
        # busy machine it moves far less than wall time.
        figures[f"speedup_cpu_{size}"] = round(
            stream["tasks_per_cpu_second"] / drf["tasks_per_cpu_second"], 1
        )
    figures.update(
        {
            "target_speedup": SPEEDUP_TARGET,
            "target_stream_rss_growth_mb": RSS_GROWTH_TARGET_MB,
            "meets_speedup_target": min(speedups.values()) >= SPEEDUP_TARGET,
            "meets_rss_target": stream_growth < RSS_GROWTH_TARGET_MB,
            "anchor": "label-studio #5852: synchronous export fails on large projects",
            "load_average_1min": [round(load_before, 2), round(load_after, 2)],
            "cpus": os.cpu_count(),
            "quick": args.quick,
        }
    )
    for size in (small, large):
        rows = []
        for path in ("stream", "drf"):
            if path not in results[size]:
                rows.append((path, "not measured at this size"))
                continue
            r = results[size][path]
            rows.append(
                (
                    path,
                    f"{r['mb_per_second']:>8} MB/s  {r['tasks_per_second']:>7} tasks/s "
                    f"({r['tasks_per_cpu_second']} per CPU s)  "
                    f"{r['seconds']:>7} s  peak RSS {r['peak_rss_mb']} MB "
                    f"(+{r['peak_rss_growth_mb']} MB over {r['rss_before_mb']} MB)",
                )
            )
        if size in speedups:
            rows.append(("speed-up", f"{speedups[size]}x (target >= {SPEEDUP_TARGET}x)"))
            rows.append(("speed-up in CPU time", f"{figures[f'speedup_cpu_{size}']}x"))
        print_table(
            f"{size:,} tasks, {results[size]['stream']['bytes'] / 1024 / 1024:.1f} MB of JSONL",
            rows,
        )
    print_table(
        "Memory of the streaming export",
        [
            (
                f"peak RSS growth {small:,} -> {large:,}",
                f"{stream_growth} MB (target < {RSS_GROWTH_TARGET_MB} MB)",
            ),
            ("load average", f"{load_before:.2f} before, {load_after:.2f} after"),
        ],
    )
    print_json_line(figures)


def argparse_hidden():
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
