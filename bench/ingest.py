"""Trajectory import benchmark: the API's bulk import against naive one-row-at-a-time saves.

    .venv/bin/python bench/ingest.py [--quick] [--database-url postgres://...]

It creates (drops and re-creates) its own PostgreSQL database, default
postgres://postgres@127.0.0.1:5432/specloom_bench_ingest, migrates it, and then

(a) imports N trajectories x 200 steps of Specloom JSONL through the real API view
    (`POST /api/v1/trajectories`, in-process with Django's test client, a write-scope token,
    evaluations queued as in production), in requests of 200 trajectories, and measures
    steps per second and the process's peak RSS;
(b) stores a sample of the same records the naive way: the same parser, then one
    `Model.save()` per trajectory and per step (autocommit), and measures steps per second;
(c) checks that every step arrived and reports the speed-up of (a) over (b).

Full run: 2,000 trajectories (400,000 steps), naive sample of 100. `--quick`: 400
trajectories, naive sample of 20; well within a minute. The last line of standard output is
one JSON object of the figures.
"""

from __future__ import annotations

import json
import os
import random
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

if __package__ in (None, ""):  # run as `python bench/ingest.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import note, parser, print_json_line, print_table, stopwatch

DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/specloom_bench_ingest"
# The broker the queued evaluations go to: a Redis database of the bench's own, emptied before
# and after, so no worker ever receives them (none listens there).
DEFAULT_REDIS = "redis://127.0.0.1:6379/12"
STEPS_PER_TRAJECTORY = 200
TRAJECTORIES_PER_REQUEST = 200
TASKS = 20

_COMMANDS = [
    "ls -la src/",
    "grep -rn 'def allocate' src/",
    "python -m pytest tests/test_reservations.py -x -q",
    "sed -n 60,120p src/ledger/reservations.py",
    "git diff",
    "cat tests/conftest.py",
]


def _peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _steps(rng: random.Random, count: int) -> list[dict]:
    """Agent turns as they look in practice: a thought and a command, then its output."""
    steps = [
        {"role": "system", "kind": "message", "content": "You are a careful coding agent. " * 8},
        {"role": "user", "kind": "message", "content": "Fix the allocation bug. " * 20},
    ]
    while len(steps) < count:
        command = rng.choice(_COMMANDS)
        output = "\n".join(
            f"{rng.randrange(1, 400):>4}: {'x' * rng.randrange(20, 90)}" for _ in range(6)
        )
        steps.append(
            {
                "role": "assistant",
                "kind": "action",
                "content": f"I will run {command} to see what happens.",
                "action": command,
                "thought": "Checking the code path before changing it.",
                "tool": "bash",
                "tokens": rng.randrange(20, 200),
            }
        )
        steps.append(
            {
                "role": "tool",
                "kind": "observation",
                "content": output,
                "observation": output,
                "tool": "bash",
            }
        )
    return steps[:count]


def _records(rng: random.Random, instance_ids: list[str], count: int, tag: str):
    """The records one at a time, so that a body is built without holding them all."""
    for number in range(count):
        yield (
            {
                "format": "specloom",
                "instance_id": instance_ids[number % len(instance_ids)],
                "model": f"model-{number % 5}",
                "scaffold": "bench-agent",
                "final_patch": (
                    "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n"
                    f"@@ -1 +1 @@\n-a\n+{tag}{number}\n"
                ),
                "exit_status": "submitted",
                "cost_usd": round(rng.random(), 4),
                "tokens_in": rng.randrange(10_000, 90_000),
                "tokens_out": rng.randrange(500, 5_000),
                "steps": _steps(rng, STEPS_PER_TRAJECTORY),
            }
        )


def _jsonl(records) -> bytes:
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def _redis(url: str):
    """A client of the bench's Redis database, emptied; None to use the filesystem broker."""
    if url == "none":
        return None
    import redis

    client = redis.Redis.from_url(url)
    try:
        client.flushdb()
    except redis.RedisError as exc:
        note(f"no Redis at {url} ({exc}); using the filesystem broker")
        return None
    return client


def _create_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1].split("?", 1)[0]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')


def main() -> None:
    options = parser(__doc__.split("\n", 1)[0])
    options.add_argument("--database-url", default=DEFAULT_DATABASE)
    options.add_argument(
        "--redis-url",
        default=DEFAULT_REDIS,
        help="broker for the queued evaluations (emptied); 'none': Celery's filesystem broker",
    )
    args = options.parse_args()
    if not args.database_url.startswith("postgres"):
        raise SystemExit("the benchmark measures PostgreSQL: give a postgres:// URL")
    trajectories = 400 if args.quick else 2000
    naive_sample = 20 if args.quick else 100

    var_dir = tempfile.mkdtemp(prefix="specloom-bench-ingest-")
    os.environ.update(
        {
            "DATABASE_URL": args.database_url,
            "SPECLOOM_VAR_DIR": var_dir,  # its own broker folder and cache
            "SPECLOOM_DEBUG": "0",  # DEBUG would keep every query in memory
            "DJANGO_SETTINGS_MODULE": "specloom.settings",
        }
    )
    broker = _redis(args.redis_url)
    if broker is None:
        os.environ.pop("REDIS_URL", None)  # queued evaluations go to the bench's own folder
    else:
        os.environ["REDIS_URL"] = args.redis_url
    note(f"creating {args.database_url}")
    _create_database(args.database_url)

    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client

    from curation.ingest import ParsedTrajectory, iter_records
    from curation.models import Trajectory, TrajectoryStep
    from curation.services.tokens import api_token_create
    from tests.factories import DatasetFactory, RepositoryFactory, TaskFactory, UserFactory
    from workers.models import Job

    with stopwatch() as took:
        call_command("migrate", verbosity=0)
    note(f"migrated in {took[0]:.1f}s")

    user = UserFactory(username="pipeline", roles=["curator"], password=None)
    dataset = DatasetFactory(name="bench")
    repository = RepositoryFactory(name="bench-repo")
    tasks = [TaskFactory(repository=repository, dataset=dataset) for _ in range(TASKS)]
    instance_ids = [task.instance_id for task in tasks]
    _token, key = api_token_create(user=user, name="bench", scopes=["write"])

    rng = random.Random(20260501)
    requests = trajectories // TRAJECTORIES_PER_REQUEST
    client = Client()
    headers = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
    # A warm-up request (untimed): a web process has imported its modules before the first
    # pipeline calls it.
    warm = client.post(
        "/api/v1/trajectories?dataset=bench&evaluate=false",
        data=_jsonl(_records(rng, instance_ids, 1, "warm-up-")),
        content_type="application/x-ndjson",
        **headers,
    )
    if warm.status_code != 201:
        raise SystemExit(f"warm-up failed: {warm.status_code} {warm.content[:500]}")
    warm_steps = STEPS_PER_TRAJECTORY
    rss_before = _peak_rss_mb()
    note(f"importing {trajectories} x {STEPS_PER_TRAJECTORY} steps in {requests} requests")
    created = 0
    payload_bytes = 0
    elapsed = 0.0
    fast_cpu = 0.0
    load_before = os.getloadavg()[0]
    for batch in range(requests):
        # Each body is made just before it is sent (and not timed), so the peak memory is
        # the import's, not that of ten bodies waiting their turn.
        body = _jsonl(_records(rng, instance_ids, TRAJECTORIES_PER_REQUEST, f"fast{batch}-"))
        payload_bytes += len(body)
        cpu_before = time.process_time()
        with stopwatch() as took:
            response = client.post(
                "/api/v1/trajectories?dataset=bench",
                data=body,
                content_type="application/x-ndjson",
                **headers,
            )
        elapsed += took[0]
        fast_cpu += time.process_time() - cpu_before
        del body
        if response.status_code != 201:
            raise SystemExit(f"import failed: {response.status_code} {response.content[:500]}")
        created += response.json()["counts"]["created"]
    load_after = os.getloadavg()[0]
    payload_mb = payload_bytes / 1024 / 1024
    fast = [elapsed]
    fast_steps = created * STEPS_PER_TRAJECTORY
    peak_rss = _peak_rss_mb()
    stored = TrajectoryStep.objects.count() - warm_steps
    if created != trajectories or stored != fast_steps:
        raise SystemExit(f"expected {fast_steps} steps, found {stored} ({created} trajectories)")
    queued = Job.objects.filter(kind="evaluate_trajectory").count()  # none for the warm-up

    # Peak RSS also holds the bench's own bodies and the test client's copies of them, and
    # Python rarely gives memory back; so one more request (untimed) is traced to tell what
    # handling one request of 200 trajectories allocates at its peak.
    body = _jsonl(_records(rng, instance_ids, TRAJECTORIES_PER_REQUEST, "traced-"))
    tracemalloc.start()
    response = client.post(
        "/api/v1/trajectories?dataset=bench",
        data=body,
        content_type="application/x-ndjson",
        **headers,
    )
    request_peak_mb = round(tracemalloc.get_traced_memory()[1] / 1024 / 1024, 1)
    tracemalloc.stop()
    if response.status_code != 201:
        raise SystemExit(f"import failed: {response.status_code} {response.content[:500]}")
    request_body_mb = round(len(body) / 1024 / 1024, 1)
    del body, response

    note(f"naive: {naive_sample} trajectories, one save() per row")
    naive_file = Path(var_dir) / "naive.jsonl"
    naive_file.write_bytes(_jsonl(_records(rng, instance_ids, naive_sample, "naive-")))
    by_instance = {task.instance_id: task for task in tasks}
    naive_steps = 0
    with stopwatch() as naive:
        for parsed in iter_records(naive_file):
            assert isinstance(parsed, ParsedTrajectory)
            trajectory = Trajectory(
                task=by_instance[parsed.instance_id],
                model_name=parsed.model,
                scaffold=parsed.scaffold or "",
                source_format=parsed.source_format,
                content_sha256=parsed.content_sha256,
                final_patch=parsed.final_patch or "",
                exit_status=parsed.exit_status or "",
                tokens_in=parsed.tokens_in,
                tokens_out=parsed.tokens_out,
                cost_usd=parsed.cost_usd,
                step_count=len(parsed.steps),
                metadata=parsed.metadata,
            )
            trajectory.save()
            for step in parsed.steps:
                TrajectoryStep(
                    trajectory=trajectory,
                    index=step.index,
                    role=step.role,
                    kind=step.kind,
                    content=step.content,
                    action=step.action or "",
                    observation=step.observation or "",
                    thought=step.thought or "",
                    tool=step.tool or "",
                    timestamp=step.timestamp or "",
                    extra={**step.extra, "tokens": step.tokens},
                ).save()
                naive_steps += 1

    if broker is not None:
        broker.flushdb()
    steps_per_second = fast_steps / fast[0]
    naive_per_second = naive_steps / naive[0]
    figures = {
        "database": "postgresql",
        "trajectories": created,
        "steps": fast_steps,
        "payload_mb": round(payload_mb, 1),
        "requests": requests,
        "seconds": round(fast[0], 2),
        "steps_per_second": round(steps_per_second),
        # This process's own CPU time: what the import costs here, apart from the database
        # server and from whatever else the machine is running.
        "cpu_seconds": round(fast_cpu, 2),
        "steps_per_cpu_second": round(fast_steps / fast_cpu),
        "trajectories_per_second": round(created / fast[0], 1),
        "mb_per_second": round(payload_mb / fast[0], 1),
        "evaluations_queued": queued,
        "broker": "redis" if broker is not None else "filesystem",
        "naive_trajectories": naive_sample,
        "naive_steps": naive_steps,
        "naive_seconds": round(naive[0], 2),
        "naive_steps_per_second": round(naive_per_second),
        "speedup": round(steps_per_second / naive_per_second, 1),
        "peak_rss_mb": peak_rss,
        "rss_before_import_mb": rss_before,
        "request_traced_peak_mb": request_peak_mb,
        "request_body_mb": request_body_mb,
        "target_steps_per_second": 20000,
        "target_speedup": 20,
        "load_average_1min": [round(load_before, 2), round(load_after, 2)],
        "cpus": os.cpu_count(),
        "quick": args.quick,
    }
    print_table(
        "Trajectory import through POST /api/v1/trajectories (PostgreSQL)",
        [
            ("trajectories x steps", f"{created} x {STEPS_PER_TRAJECTORY} = {fast_steps}"),
            ("payload", f"{payload_mb:.1f} MB in {figures['requests']} requests"),
            ("wall time", f"{fast[0]:.2f} s"),
            ("steps per second", f"{steps_per_second:,.0f} (target >= 20,000)"),
            ("this process's CPU", f"{fast_cpu:.2f} s ({fast_steps / fast_cpu:,.0f} steps/CPU s)"),
            ("trajectories per second", f"{created / fast[0]:,.1f}"),
            ("evaluations queued", queued),
            ("naive save() per row", f"{naive_per_second:,.0f} steps/s ({naive_steps} steps)"),
            ("speed-up", f"{figures['speedup']}x (target >= 20x)"),
            ("peak RSS", f"{peak_rss} MB (before the import: {rss_before} MB)"),
            (
                "one request, traced",
                f"{request_peak_mb} MB allocated at the peak for a {request_body_mb} MB body",
            ),
            (
                "load average",
                f"{load_before:.2f} before, {load_after:.2f} after ({os.cpu_count()} CPUs)",
            ),
        ],
    )
    print_json_line(figures)


if __name__ == "__main__":
    main()
