"""How fast the reviewer's pages answer on a big database, and how many queries they make.

Seeds a separate PostgreSQL database (COPY, once; reused while the scale matches) with tasks,
specs, tests, links, findings, trajectories of 200 steps, evaluations and spec results, then
measures the queue (filtered, deep cursor), the task page and a trajectory page through the
Django test client: median and p95 server time over 50 requests each, and SQL queries per page.

    .venv/bin/python bench/pages.py [--quick] [--database-url postgres://...] [--reseed]

Full: 100k tasks, 600k specs, 1.2M tests, 5k trajectories x 200 steps. --quick: a tenth of the
tasks, specs and tests and 500 trajectories, finishing within a minute. Targets: p95 < 150 ms
and at most 20 queries per page; the query count must not depend on the size of the data.
"""

from __future__ import annotations

import base64
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import median, ms, note, parser, percentile, print_json_line, print_table  # noqa: E402
from bench.pages_seed import mark_seeded, reset_database, seed, seeded_scale  # noqa: E402

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/specloom_bench_pages"
SCALES = {
    "full": {"tasks": 100_000, "specs": 6, "tests": 12, "trajectories": 5_000, "steps": 200},
    "quick": {"tasks": 10_000, "specs": 6, "tests": 12, "trajectories": 300, "steps": 200},
}
REQUESTS = 50
TARGET_P95_MS = 150
TARGET_QUERIES = 20
# The pages whose p95 and query count the targets are about.
MEASURED = ("queue_filtered_deep", "task_page", "trajectory_page")
ANCHORS = (
    "Label Studio project pages > 15 s at 10k tasks (label-studio #9637); "
    "Argilla UI 24 s for 38k records (argilla #1818)"
)


def queue_cursor(pk: int) -> str:
    """The queue's keyset cursor for the default sort (by id): base64 of [id, id]."""
    raw = json.dumps([pk, pk], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def setup_django(url: str) -> None:
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault(
        "SPECLOOM_VAR_DIR", str(Path(tempfile.gettempdir()) / "specloom-bench-pages")
    )
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "specloom.settings")
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()


def ensure_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    admin_url = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            note(f"creating database {name}")
            conn.execute(f'CREATE DATABASE "{name}"')


def prepare(url: str, mode: str, *, reseed: bool) -> None:
    """The database migrated and seeded at this scale (reused when it already is)."""
    ensure_database(url)
    setup_django(url)
    from django.core.management import call_command

    scale = SCALES[mode]
    if reseed:
        reset_database()
    call_command("migrate", verbosity=0)
    if seeded_scale() != scale:
        if seeded_scale() is not None:
            reset_database()
            call_command("migrate", verbosity=0)
        note(f"seeding {mode} scale: {scale}")
        seed(scale)
        mark_seeded(scale)
    else:
        note("reusing the seeded data")


# --- measuring --------------------------------------------------------------------------------


def measure(client, urls: list[str], n: int = REQUESTS) -> dict:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.get("/")  # warm the process (templates, connections), not the pages measured
    times, queries = [], []
    for i in range(n):
        url = urls[i % len(urls)]
        with CaptureQueriesContext(connection) as ctx:
            started = time.perf_counter()
            response = client.get(url)
            took = time.perf_counter() - started
        if response.status_code != 200:
            raise SystemExit(f"{url} answered {response.status_code}")
        times.append(took)
        queries.append(len(ctx.captured_queries))
    return {
        "median_ms": ms(median(times)),
        "p95_ms": ms(percentile(times, 95)),
        "queries": max(queries),
        "queries_min": min(queries),
    }


def queue_pages(client) -> dict:
    """The queue: a dataset, a status and "has findings", paged deep by the keyset cursor; its
    first page; a search."""
    from curation.models import Task

    deep = Task.objects.filter(dataset__name="bench-1", status="needs_review").order_by("id")
    deep_ids = list(deep.values_list("id", flat=True)[int(deep.count() * 0.9) :][:5])
    queue_urls = [
        f"/review/queue/?dataset=bench-1&status=needs_review&findings=yes&cursor={queue_cursor(pk)}"
        for pk in deep_ids
    ]
    return {
        "queue_filtered_deep": measure(client, queue_urls),
        "queue_first_page": measure(client, ["/review/queue/"], n=20),
        "queue_search": measure(client, ["/review/queue/?q=module+42&status=needs_review"], n=20),
    }


def task_pages(client) -> dict:
    """Fifty different tasks with trajectories (each renders its patches for the first time),
    and one task without any."""
    from curation.models import Task

    heavy = list(
        Task.objects.filter(trajectories__isnull=False)
        .distinct()
        .order_by("id")
        .values_list("id", flat=True)[:200]
    )
    sample = random.Random(3).sample(heavy, min(REQUESTS, len(heavy)))
    light_task = (
        Task.objects.filter(trajectories__isnull=True)
        .order_by("-id")
        .values_list("id", flat=True)
        .first()
    )
    return {
        "task_page": measure(client, [f"/review/tasks/{pk}/" for pk in sample]),
        "task_page_without_trajectories": measure(client, [f"/review/tasks/{light_task}/"], n=10),
    }


def trajectory_pages(client) -> dict:
    """The latest trajectories' first page of steps, and a page deep into their steps."""
    from curation.models import Trajectory

    trajectories = list(Trajectory.objects.order_by("-id").values_list("id", flat=True)[:REQUESTS])
    return {
        "trajectory_page": measure(client, [f"/review/trajectories/{pk}/" for pk in trajectories]),
        "trajectory_steps_deep": measure(
            client, [f"/review/trajectories/{pk}/?after=150" for pk in trajectories], n=20
        ),
    }


def dashboard_page(client) -> dict:
    return {"dashboard": measure(client, ["/"], n=5)}


def measure_pages() -> dict:
    """Every page, as the seeded reviewer, in the order the table lists them."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    client.force_login(get_user_model().objects.get(username="bench-reviewer"))
    return {
        **queue_pages(client),
        **task_pages(client),
        **trajectory_pages(client),
        **dashboard_page(client),
    }


# --- reporting --------------------------------------------------------------------------------


def print_results(mode: str, scale: dict, n_tasks: int, results: dict) -> None:
    rows = [
        (
            "data",
            f"{n_tasks:,} tasks · {n_tasks * scale['specs']:,} specs · "
            f"{n_tasks * scale['tests']:,} tests · "
            f"{scale['trajectories']:,} trajectories x {scale['steps']} steps",
        )
    ]
    for name, figures in results.items():
        rows.append(
            (
                name,
                f"median {figures['median_ms']} ms · p95 {figures['p95_ms']} ms · "
                f"{figures['queries']} queries",
            )
        )
    print_table(f"Reviewer pages on PostgreSQL ({mode})", rows)


def queries_independent_of_data(results: dict) -> bool:
    """A page with more behind it (trajectories, a deep cursor, early steps) makes no more
    queries than the same page with less."""
    return (
        results["task_page"]["queries"] == results["task_page_without_trajectories"]["queries"]
        and results["queue_filtered_deep"]["queries"] == results["queue_first_page"]["queries"]
        and results["trajectory_page"]["queries"] >= results["trajectory_steps_deep"]["queries"]
    )


def figures_line(mode: str, scale: dict, n_tasks: int, results: dict, wall: float) -> dict:
    """The JSON line's figures (keys documented in bench/README.md)."""
    max_queries = max(results[k]["queries"] for k in MEASURED)
    return {
        "mode": mode,
        "tasks": n_tasks,
        "specs": n_tasks * scale["specs"],
        "tests": n_tasks * scale["tests"],
        "trajectories": scale["trajectories"],
        "steps_per_trajectory": scale["steps"],
        "requests_per_page": REQUESTS,
        "queue_median_ms": results["queue_filtered_deep"]["median_ms"],
        "queue_p95_ms": results["queue_filtered_deep"]["p95_ms"],
        "task_median_ms": results["task_page"]["median_ms"],
        "task_p95_ms": results["task_page"]["p95_ms"],
        "trajectory_median_ms": results["trajectory_page"]["median_ms"],
        "trajectory_p95_ms": results["trajectory_page"]["p95_ms"],
        "queue_search_p95_ms": results["queue_search"]["p95_ms"],
        "trajectory_steps_deep_p95_ms": results["trajectory_steps_deep"]["p95_ms"],
        "dashboard_median_ms": results["dashboard"]["median_ms"],
        "queries": {k: v["queries"] for k, v in results.items()},
        "max_queries_per_page": max_queries,
        "queries_independent_of_data": queries_independent_of_data(results),
        "target_p95_ms": TARGET_P95_MS,
        "target_max_queries": TARGET_QUERIES,
        "meets_targets": max(results[k]["p95_ms"] for k in MEASURED) < TARGET_P95_MS
        and max_queries <= TARGET_QUERIES,
        "anchors": ANCHORS,
        # Timings on a shared 2-core machine move with its load: say what it was.
        "load_average_1m": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count(),
        "wall_seconds": round(time.perf_counter() - wall, 1),
    }


def main() -> None:
    args_parser = parser(__doc__.split("\n\n")[0])
    args_parser.add_argument(
        "--database-url", default=os.environ.get("BENCH_PAGES_DATABASE_URL", "")
    )
    args_parser.add_argument("--reseed", action="store_true", help="drop and seed the data again")
    args = args_parser.parse_args()
    mode = "quick" if args.quick else "full"
    scale = SCALES[mode]
    url = args.database_url or (DEFAULT_URL + ("_quick" if args.quick else ""))
    wall = time.perf_counter()
    prepare(url, mode, reseed=args.reseed)

    from curation.models import Task

    n_tasks = Task.objects.count()
    results = measure_pages()
    print_results(mode, scale, n_tasks, results)
    print_json_line(figures_line(mode, scale, n_tasks, results, wall))


if __name__ == "__main__":
    main()
