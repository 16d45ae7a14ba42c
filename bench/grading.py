"""Grading benchmark: patches graded through the real service, jobs and jailed sandbox runs.

    .venv/bin/python bench/grading.py [--quick] [--root /var/tmp/sl-bench-grading]
                                      [--database-url postgres://...]

A throw-away database (SQLite in a temporary folder unless --database-url names one, which is
then dropped and made again), the two sample repositories (examples/repos) and their hand-made
tasks (tests/fixtures/tasks), and 2 worker processes that take queued grade jobs as a Celery
worker of the sandbox queue would (prefetch 1; the broker hop is replaced by polling the job
table every 10 ms). Patches are submitted with `grades_submit`, as the API does.

- `grade_latency_p50_s`, `grade_latency_p95_s`: one grade on a warm environment with idle
  workers, submit to finished (job pickup, patch check, jailed run, result rows);
- `bare_pytest_p50_s`: the same tests run by bare pytest on the same interpreter, with the
  patch (and the tests) applied by hand in a plain folder;
- `overhead_vs_bare`: `grade_latency_p50_s` / `bare_pytest_p50_s` (target 1.3), in interleaved
  rounds; `overhead_vs_bare_cpu`: the same in CPU time (the workers' own and their children's,
  the jailed tests included, against bare pytest's), which load elsewhere moves far less;
  `engine_seconds_p50`: the evaluation engine's own time inside the grade;
  Each sample starts after a pause (`settle`): a finished grade's background work (removing
  its run folder, starting the environment's next warm jail) must not land in either sample.
  Workers use the settings' warm jails (SPECLOOM_SANDBOX_WARM_JAILS; `0` measures cold starts);
  the CPU a warm jail spent starting, before its grade was sent, falls between samples and is
  not in `grade_cpu_p50_s`;
- `grades_per_minute`: a batch of mixed patches (passing, failing, not applying) on both tasks,
  2 workers, submit to the last one finished (target 20);
- `group_speedup`: 8 patches of one task sent as one group (one job, its patches in parallel)
  against the same kind of 8 sent one by one, each awaited; interleaved rounds.

Environments are built once under --root and reused by later runs (the first run of a fresh
root spends about a minute building them; --quick expects them warm). Progress goes to standard
error; the last line of standard output is one JSON object.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as `python bench/grading.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, median, note, parser, percentile, print_json_line, print_table

FIXTURES = ROOT / "tests" / "fixtures" / "tasks"
EXAMPLES = ROOT / "examples" / "repos"
WORKERS = 2
GROUP = 8
SETTLE_SECONDS = 1.0
TARGETS = {"grades_per_minute": 20, "overhead_vs_bare": 1.3}
ANCHOR = "the SWE-bench Docker harness validates about one task per core-minute"


def setup_django(
    var_dir: Path, database_url: str | None, sandbox_root: Path, redis_url: str | None = None
) -> None:
    os.environ["SPECLOOM_VAR_DIR"] = str(var_dir)
    os.environ["SPECLOOM_SANDBOX_ROOT"] = str(sandbox_root)
    # The runs' cgroups under a parent of the bench's own: its CPU count is theirs alone.
    os.environ.setdefault("SPECLOOM_CGROUP_PARENT", f"sl-bench-grading-{os.getpid()}")
    if redis_url:
        os.environ["REDIS_URL"] = redis_url
    else:
        os.environ.pop("REDIS_URL", None)
    if database_url:
        os.environ["DATABASE_URL"] = database_url
    else:
        os.environ.pop("DATABASE_URL", None)
    os.environ["DJANGO_SETTINGS_MODULE"] = "specloom.settings"
    import django

    django.setup()


def _recreate_database(database_url: str) -> None:
    import psycopg

    base, name = database_url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')


# ---------------------------------------------------------------------------------------------
# Worker processes


def worker_main(stop_file: Path) -> None:
    """A sandbox-queue worker: take the oldest queued grade job, run it, again."""
    from django.db import close_old_connections

    from curation.services.grading import GRADE_KIND
    from workers.models import Job
    from workers.sandbox_runtime import sandbox_backend
    from workers.services import job_execute

    sandbox_backend()
    while not stop_file.exists():
        close_old_connections()
        queued = list(
            Job.objects.filter(kind=GRADE_KIND, status=Job.Status.QUEUED)
            .order_by("id")
            .values_list("pk", flat=True)[:1]
        )
        if not queued:
            time.sleep(0.01)
            continue
        job_execute(job_id=queued[0])


def start_workers(scratch: Path, args) -> tuple[list[subprocess.Popen], Path]:
    """Real Celery workers of the sandbox queue on the bench's Redis database (solo pool: the
    job runs in the worker's own process; prefetch 1), or, without Redis, processes that poll
    the job table."""
    stop = scratch / "stop"
    env = dict(os.environ)
    if args.redis_url:
        argv = [sys.executable, "-m", "celery", "-A", "specloom", "worker", "-Q", "sandbox"]
        argv += ["--pool", "solo", "--without-gossip", "--without-mingle", "--without-heartbeat"]
        argv += ["--loglevel", "WARNING"]
        return [
            # Their banners and logs go to standard error: standard output is the figures'.
            subprocess.Popen([*argv, "-n", f"grading{n}@%h"], env=env, cwd=ROOT, stdout=sys.stderr)
            for n in range(WORKERS)
        ], stop
    argv = [sys.executable, str(Path(__file__).resolve()), "--worker", str(stop)]
    argv += ["--root", str(args.root)]
    if args.database_url:
        argv += ["--database-url", args.database_url]
    return [subprocess.Popen(argv, env=env, stdout=sys.stderr) for _ in range(WORKERS)], stop


def stop_workers(workers: list[subprocess.Popen], stop: Path) -> None:
    stop.touch()
    for worker in workers:
        if worker.poll() is None:
            worker.terminate()  # a Celery worker's warm shutdown; the pollers stop on `stop`
    for worker in workers:
        worker.wait(timeout=60)


# ---------------------------------------------------------------------------------------------
# Tasks and patches


def make_tasks() -> list:
    from curation.models import Dataset, TestCase
    from curation.services.repositories import repository_import
    from curation.services.tasks import task_create
    from workers import gitstore

    dataset = Dataset.objects.create(name="bench-grading")
    tasks = []
    for fixture in ("ledger_allocation", "marktext_toc"):
        spec = json.loads((FIXTURES / fixture / "task.json").read_text())
        repository = repository_import(
            source=str(EXAMPLES / spec["repository"]), name=spec["repository"]
        )
        base = gitstore.commit_patch(
            repository.git_dir,
            repository.default_commit,
            (FIXTURES / fixture / "base.patch").read_text(),
            f"Task base: {fixture}",
        )
        task = task_create(
            repository=repository,
            dataset=dataset,
            title=spec["title"],
            problem_statement=spec["problem_statement"],
            base_commit=base,
            reference_patch=(FIXTURES / fixture / "reference.patch").read_text(),
            test_patch=(FIXTURES / fixture / "tests.patch").read_text(),
            specs=spec["specs"],
            tests=spec["tests"],
            dependencies=spec["dependencies"],
        )
        # Validation would call it flaky; a flaky test is never graded.
        TestCase.objects.filter(task=task, nodeid__endswith="_flaky_on_purpose").update(
            role=TestCase.Role.FLAKY
        )
        tasks.append(task)
    return tasks


def rollout(patch: str, n: int) -> str:
    """`patch` plus a file of its own: a distinct digest (a distinct rollout), the same tests."""
    extra = (
        f"diff --git a/rollout_{n}.txt b/rollout_{n}.txt\nnew file mode 100644\n"
        f"--- /dev/null\n+++ b/rollout_{n}.txt\n@@ -0,0 +1 @@\n+{n}\n"
    )
    return (patch if patch.endswith("\n") or not patch else patch + "\n") + extra


class Counter:
    n = 0

    @classmethod
    def next(cls) -> int:
        cls.n += 1
        return cls.n


def mixed_patches(task, count: int) -> list[str]:
    """Rollouts as a policy makes them: half solve the task, a quarter change nothing, a quarter
    do not apply."""
    broken = "diff --git a/nowhere.py b/nowhere.py\n--- a/nowhere.py\n+++ b/nowhere.py\n"
    broken += "@@ -1 +1 @@\n-not\n+there\n"
    kinds = [task.reference_patch, task.reference_patch, "", broken]
    return [rollout(kinds[i % len(kinds)], Counter.next()) for i in range(count)]


def submit(pairs: list[tuple]) -> list[int]:
    from curation.services.grading import GradeRequest, grades_submit

    submitted = grades_submit(
        requests=[GradeRequest(task=task, patch=patch, model="bench") for task, patch in pairs],
        limits=False,
    )
    return [s.grade.pk for s in submitted]


def wait_done(grade_ids: list[int], timeout: float = 600) -> None:
    from django.db import close_old_connections

    from curation.models import Grade

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        close_old_connections()
        if not Grade.objects.filter(pk__in=grade_ids, status__in=Grade.PENDING).exists():
            failed = list(Grade.objects.filter(pk__in=grade_ids, status="failed")[:1])
            if failed:
                raise SystemExit(f"grade {failed[0].pk} failed: {failed[0].error[-1000:]}")
            return
        time.sleep(0.005)
    raise SystemExit(f"grades {grade_ids} did not finish within {timeout} s")


def settle() -> None:
    """Let what a finished grade starts in the background (its run folder's removal, the next
    run's warm jail) end before the next sample, so that neither sample pays for it."""
    time.sleep(SETTLE_SECONDS)


def timed_grades(pairs: list[tuple]) -> float:
    started = time.perf_counter()
    wait_done(submit(pairs))
    return time.perf_counter() - started


_TICK = os.sysconf("SC_CLK_TCK")


def process_cpu(pids: list[int]) -> float:
    """CPU seconds of the processes and of their children they have waited for (the jailed
    test processes, git), from /proc/<pid>/stat."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
    return total / _TICK


def cgroup_cpu(parent: str) -> float:
    """CPU seconds of every jailed run so far: the runs' cgroups are the children of `parent`
    (a parent of the bench's own), and their usage stays counted in it (v1 cpuacct, v2 cpu)."""
    v1 = Path("/sys/fs/cgroup/cpuacct") / parent / "cpuacct.usage"
    if v1.is_file():
        return int(v1.read_text()) / 1e9
    v2 = Path("/sys/fs/cgroup") / parent / "cpu.stat"
    if v2.is_file():
        for line in v2.read_text().splitlines():
            if line.startswith("usage_usec "):
                return int(line.split()[1]) / 1e6
    return 0.0


def children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# ---------------------------------------------------------------------------------------------
# The bare baseline


def bare_copies(tasks: list, scratch: Path) -> dict:
    """Per task: its solved files (base + reference + tests) in a plain folder, the grade's
    node ids and the warm environment's interpreter."""
    from curation import runtime
    from curation.models import Grade
    from curation.services.evaluation import evaluation_plan
    from workers import gitstore

    backend = runtime.sandbox_backend()
    copies = {}
    for task in tasks:
        git_dir = task.repository.git_dir
        solved = gitstore.commit_patch(git_dir, task.base_commit, task.reference_patch, "ref")
        solved = gitstore.commit_patch(git_dir, solved, task.test_patch, "tests")
        work = scratch / f"bare-{task.pk}" / "work"
        gitstore.archive_to(git_dir, solved, work)
        (work.parent / "home").mkdir()
        key = Grade.objects.filter(task=task).exclude(environment_key="").first().environment_key
        plan = evaluation_plan(task=task)
        copies[task.pk] = (work, backend.environments.python(key), plan)
    return copies


def bare_pytest(copy, cpu: list[float] | None = None) -> float:
    work, python, plan = copy
    nodeids = [*plan["fail_to_pass"], *plan["pass_to_pass"]]
    pythonpath = [str(work / "src")] if (work / "src").is_dir() else []
    env = {
        "PATH": f"{python.parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(work.parent / "home"),
        "LANG": "C.UTF-8",
        "PYTHONPATH": ":".join([*pythonpath, str(work)]),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    started, cpu_before = time.perf_counter(), children_cpu()
    done = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *nodeids],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    took = time.perf_counter() - started
    if cpu is not None:
        cpu.append(children_cpu() - cpu_before)
    if done.returncode != 0:
        raise SystemExit(f"bare pytest failed:\n{done.stdout[-2000:]}")
    return took


# ---------------------------------------------------------------------------------------------


def measure(args, scratch: Path) -> dict:
    from django.conf import settings
    from django.core.management import call_command

    from curation.models import Grade

    call_command("migrate", verbosity=0)
    tasks = make_tasks()
    workers, stop = start_workers(scratch, args)
    try:
        note("warming the environments (built once per --root)")
        warm_started = time.perf_counter()
        wait_done(submit([(task, rollout(task.reference_patch, Counter.next())) for task in tasks]))
        warm_seconds = time.perf_counter() - warm_started
        copies = bare_copies(tasks, scratch)
        for task in tasks:  # one untimed round of each, so nothing below is a first
            bare_pytest(copies[task.pk])
            timed_grades([(task, rollout(task.reference_patch, Counter.next()))])

        rounds = 4 if args.quick else 12
        note(f"latency and the bare baseline: {rounds} interleaved rounds per task")
        latencies, bare, grade_cpu, bare_cpu = [], [], [], []
        pids = [worker.pid for worker in workers]
        for _ in range(rounds):
            for task in tasks:
                settle()
                bare.append(bare_pytest(copies[task.pk], bare_cpu))
                settle()
                before = process_cpu(pids) + cgroup_cpu(settings.SPECLOOM_CGROUP_PARENT)
                latencies.append(
                    timed_grades([(task, rollout(task.reference_patch, Counter.next()))])
                )
                after = process_cpu(pids) + cgroup_cpu(settings.SPECLOOM_CGROUP_PARENT)
                grade_cpu.append(after - before)
        engine = list(
            Grade.objects.filter(status="done")
            .order_by("-id")
            .values_list("run_seconds", flat=True)
        )[: len(latencies)]

        group_rounds = 1 if args.quick else 3
        note(f"group of {GROUP} against one by one: {group_rounds} interleaved round(s)")
        grouped, one_by_one = [], []
        for _ in range(group_rounds):
            task = tasks[0]
            grouped.append(timed_grades([(task, p) for p in mixed_patches(task, GROUP)]))
            one_by_one.append(sum(timed_grades([(task, p)]) for p in mixed_patches(task, GROUP)))

        batch = 16 if args.quick else 48
        note(f"throughput: {batch} mixed patches on both tasks, {WORKERS} workers")
        pairs = [
            (task, patch) for task in tasks for patch in mixed_patches(task, batch // len(tasks))
        ]
        throughput_seconds = timed_grades(pairs)
    finally:
        stop_workers(workers, stop)

    p50 = median(latencies)
    return {
        "quick": args.quick,
        "workers": WORKERS,
        "worker_kind": "celery (redis, solo pool)" if args.redis_url else "job-table pollers",
        "grade_threads_per_job": settings.SPECLOOM_GRADE_THREADS,
        "grade_reruns": settings.SPECLOOM_GRADE_RERUNS,
        "warm_jails": settings.SPECLOOM_SANDBOX_WARM_JAILS,
        "grades_per_minute": round(len(pairs) / throughput_seconds * 60, 1),
        "throughput_grades": len(pairs),
        "grade_latency_p50_s": round(p50, 3),
        "grade_latency_p95_s": round(percentile(latencies, 95), 3),
        "bare_pytest_p50_s": round(median(bare), 3),
        "overhead_vs_bare": round(p50 / median(bare), 3),
        "grade_cpu_p50_s": round(median(grade_cpu), 3),
        "bare_pytest_cpu_p50_s": round(median(bare_cpu), 3),
        "overhead_vs_bare_cpu": round(median(grade_cpu) / median(bare_cpu), 3),
        "engine_seconds_p50": round(median(engine), 3),
        "group_speedup": round(median(one_by_one) / median(grouped), 2),
        "group_seconds": [round(s, 2) for s in grouped],
        "one_by_one_seconds": [round(s, 2) for s in one_by_one],
        "warm_up_seconds": round(warm_seconds, 1),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "targets": TARGETS,
        "anchor": ANCHOR,
    }


def main() -> None:
    cli = parser(__doc__.splitlines()[0])
    cli.add_argument("--root", type=Path, default=Path("/var/tmp/sl-bench-grading"))
    cli.add_argument("--database-url", default=None)
    cli.add_argument(
        "--redis-url",
        default=os.environ.get("REDIS_URL") or None,
        help="the bench's own Redis database (emptied before and after): real Celery workers",
    )
    cli.add_argument("--worker", default=None, help=argparse_hidden())
    args = cli.parse_args()
    if args.worker:
        setup_django(Path(os.environ["SPECLOOM_VAR_DIR"]), args.database_url, args.root)
        worker_main(Path(args.worker))
        return
    scratch = Path(tempfile.mkdtemp(prefix="sl-bench-grading-"))
    try:
        if args.database_url:
            _recreate_database(args.database_url)
        _flush(args.redis_url)
        setup_django(scratch / "var", args.database_url, args.root, args.redis_url)
        figures = measure(args, scratch)
    finally:
        _flush(args.redis_url)
        shutil.rmtree(scratch, ignore_errors=True)
    print_table(
        "Grading",
        [(key, value) for key, value in figures.items() if not isinstance(value, dict | list)],
    )
    print_json_line(figures)


def _flush(redis_url: str | None) -> None:
    if redis_url:
        import redis

        redis.Redis.from_url(redis_url).flushdb()


def argparse_hidden() -> str:
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
