"""Sandbox benchmark: what the jail and validation cost against bare pytest, on a sample repo.

    .venv/bin/python bench/sandbox.py [--quick] [--root /var/tmp/specloom-bench-sandbox]

Figures (the real `process` backend, real pytest; as root every run is jailed: bubblewrap as
the unprivileged jail user, a cgroup per run):

(a) bare pytest: the task's tests (the same node ids, the same files: base + reference + tests
    in a plain folder) run by the warm environment's interpreter directly, no isolation;
(b) one validation pass (base + tests, then reference + tests; reruns=1, no interaction check)
    divided by 2, against (a): `overhead_ratio` (target <= 1.25); a breakdown of one sandbox
    run tells where the time goes; `jail_start_ms_p50`: a no-op run in the jail;
(c) environment set-up: cold (a fresh sandbox root, empty wheelhouse; full mode only), a new
    environment key in the bench root, and a warm (cached) lookup; plus the proof that a second
    task on the same repository reuses the environment (RunResult.environment_built);
(d) tasks validated per minute by 2 worker processes, each with its own backend on one root;
(e) `concurrent_runs_failed`: 20 runs (8 with --quick), 4 at a time, while a neighbour sets off
    fork bombs in its own runs throughout; must be 0.

The last line of standard output is one JSON object of the figures.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

if __package__ in (None, ""):  # run as `python bench/sandbox.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import (
    measured,
    median,
    note,
    parser,
    print_json_line,
    stopwatch,
)
from bench.sandbox_report import WORKERS, collect, report
from bench.sandbox_tasks import (
    BenchTask,
    PlainCopy,
    fixture_task,
    import_samples,
    plain_copy,
    reported_count,
    second_task,
    with_fork_bomb,
)
from workers.sandbox import (
    EnvironmentSpec,
    Limits,
    RunRequest,
    RunResult,
    Snapshot,
    get_backend,
)
from workers.sandbox import process as process_module
from workers.sandbox import run_folder as run_folder_module
from workers.sandbox.jail import Jail
from workers.sandbox.supervise import supervise
from workers.validation import ValidationInput, ValidationOutcome, validate_task

DEFAULT_ROOT = Path("/var/tmp/specloom-bench-sandbox")
SINGLE = {"reruns": 1, "interaction": False}


# ---------------------------------------------------------------------------------------------
# (b) where a sandbox run's time goes


PROFILED_STEPS = (
    # (label, module or object holding the name, name)
    ("environment lookup (git ls-tree, key)", "environments", "ensure"),
    ("run folder create", run_folder_module.RunFolder, "create"),
    (
        "working-copy checkout (read-tree -u)",
        run_folder_module,
        "materialize_snapshot",
    ),
    ("chown to the sandbox user", run_folder_module, "chown_tree"),
    ("git apply (setpriv, all patches at once)", run_folder_module, "apply_patches"),
    ("select files + support files", run_folder_module, "write_support_files"),
    ("test process (cgroup + launcher + bwrap + pytest)", "jails", "run"),
    ("events parsing", process_module, "record_outcomes"),
    # The folder is removed in the background; the run only renames it.
    ("cleanup (move the run folder out)", process_module.ProcessBackend, "_discard"),
)


@contextmanager
def profiled(backend) -> Iterator[dict[str, list[float]]]:
    """Time the steps of ProcessBackend.run (wall and CPU) by wrapping them in this process."""
    spent: dict[str, list[dict[str, float]]] = {label: [] for label, _, _ in PROFILED_STEPS}
    spent["whole run"] = []
    originals = []

    def wrap(label: str, function: Callable) -> Callable:
        def timed(*args, **kwargs):
            with measured() as took:
                result = function(*args, **kwargs)
            spent[label].append(took)
            return result

        return timed

    instances = {"environments": backend.environments, "jails": backend.jails}
    targets = [(instances.get(owner, owner), name, label) for label, owner, name in PROFILED_STEPS]
    targets.append((backend, "run", "whole run"))
    try:
        for owner, name, label in targets:
            original = getattr(owner, name)
            originals.append((owner, name, original))
            setattr(owner, name, wrap(label, original))
        yield spent
    finally:
        for owner, name, original in reversed(originals):
            if owner is backend or owner in instances.values():
                delattr(owner, name)  # back to the class's method
            else:
                setattr(owner, name, original)


def jail_start(backend) -> dict[str, float]:
    """A no-op run in the jail: a cgroup, the launcher, bubblewrap (namespaces, mounts, the
    jail's user), /bin/true, the cgroup killed and removed."""
    jail = Jail(argv=["/bin/true"], env={"PATH": "/usr/bin:/bin"}, cwd="/")
    with measured() as spent:
        finished = backend.jails.run(jail, Limits(wall_seconds=30))
    if finished.returncode != 0:
        raise RuntimeError(f"the no-op run failed: {finished.stderr.text()}")
    return spent


def exit_detection_seconds(cwd: Path, repeats: int) -> list[float]:
    """How late supervise() notices that a child exited: a `sleep` under supervise() minus the
    same sleep under subprocess.run (sleeping is not CPU-bound, so this holds on a busy machine
    too)."""
    argv = ["sleep", "0.3"]
    late = []
    for _ in range(repeats):
        finished = supervise(
            argv, env={"PATH": "/usr/bin:/bin"}, cwd=cwd, wall_seconds=60, max_output_bytes=4096
        )
        with stopwatch() as took:
            subprocess.run(argv, cwd=cwd, check=True)
        late.append(finished.wall_seconds - took[0])
    return late


def medians(samples: list[dict[str, float]]) -> dict[str, float]:
    return {kind: median([sample[kind] for sample in samples]) for kind in ("wall", "cpu")}


def minus(left: dict[str, float], right: dict[str, float]) -> dict[str, float]:
    return {kind: left[kind] - right[kind] for kind in ("wall", "cpu")}


# ---------------------------------------------------------------------------------------------
# (c) environments


def remove_environment(root: Path, key: str) -> None:
    shutil.rmtree(root / "envs" / key, ignore_errors=True)
    (root / "locks" / f"{key}.lock").unlink(missing_ok=True)


def validate_recording(
    task: BenchTask, backend, **options
) -> tuple[ValidationOutcome, list[RunResult]]:
    """Validate a task and keep every RunResult (validate_task keeps only summaries)."""
    results: list[RunResult] = []

    def runner(request: RunRequest) -> RunResult:
        result = backend.run(request)
        results.append(result)
        return result

    outcome = validate_task(task.validation_input(**options), runner)
    return outcome, results


def environment_figures(task: BenchTask, second: BenchTask, root: Path, *, fresh: bool) -> dict:
    """Build an environment that does not exist yet, then validate the repository's second task
    on it: the build's seconds, and whether any run of the second task built an environment.

    fresh: in a new sandbox root (empty wheelhouse), removed afterwards; otherwise a new key (a
    setup command that differs by a comment) in `root`, whose environment is removed afterwards.
    """
    where = Path(tempfile.mkdtemp(prefix="specloom-bench-cold-", dir="/var/tmp")) if fresh else root
    spec = EnvironmentSpec() if fresh else EnvironmentSpec(f"pip install .  # bench {uuid.uuid4()}")
    backend = get_backend("process", root=where)
    key = ""
    try:
        with stopwatch() as took:
            key, built = backend.ensure_environment(task.snapshot, spec)
        if not built:
            raise RuntimeError(f"environment {key} was expected to be new, but was cached")
        _outcome, results = validate_recording(
            second, backend, reruns=1, interaction=False, environment=spec
        )
        return {
            "seconds": took[0],
            "key": key,
            "second_task_rebuilt": any(r.environment_built for r in results),
            "second_task_same_key": all(r.environment_key == key for r in results),
            "second_task_runs": len(results),
        }
    finally:
        if fresh:
            shutil.rmtree(where, ignore_errors=True)
        elif key:
            remove_environment(root, key)


# ---------------------------------------------------------------------------------------------
# (d) throughput with worker processes

_worker_backend = None


def _worker_start(root: str) -> None:
    global _worker_backend
    _worker_backend = get_backend("process", root=Path(root))


def _worker_validate(item: tuple[str, ValidationInput]) -> dict:
    name, inp = item
    started = time.perf_counter()
    built = []

    def runner(request: RunRequest) -> RunResult:
        result = _worker_backend.run(request)
        built.append(result.environment_built)
        return result

    outcome = validate_task(inp, runner)
    return {
        "task": name,
        "verified": outcome.verified,
        "runs": len(outcome.runs),
        "seconds": time.perf_counter() - started,
        "built": any(built),
    }


def throughput(root: Path, items: list[tuple[str, ValidationInput]]) -> dict:
    context = multiprocessing.get_context("fork")
    start = {"initializer": _worker_start, "initargs": (str(root),)}
    with stopwatch() as took, context.Pool(WORKERS, **start) as pool:
        done = list(pool.imap_unordered(_worker_validate, items))
    return {"wall_seconds": took[0], "done": done}


# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# (e) runs side by side with a fork bomb


def concurrency_with_fork_bomb(backend, task: BenchTask, bomb: Snapshot, *, runs: int) -> dict:
    """`runs` runs of the task's tests, 4 at a time, while a neighbour sets off fork bombs in
    its own runs throughout: how many of them failed (an error, or outcomes other than those
    of a quiet run)."""
    request = RunRequest(
        snapshot=task.snapshot,
        patches=(task.reference_patch, task.test_patch),
        tests=task.nodeids,
        limits=Limits(wall_seconds=120),
    )
    # Quiet runs first: the sample task holds a test that is flaky on purpose, whose outcome
    # is no sign of a neighbour's harm. Such a test can look steady over a few quiet runs (a
    # coin lands the same way 8 times in 128 tries), so a test that differs beside the bombs is
    # run quietly again once they are done, and one that varies there too is flaky.
    quiet = [{n: t.outcome for n, t in backend.run(request).tests.items()} for _ in range(8)]
    steady = {n for n in quiet[0] if all(run.get(n) == quiet[0][n] for run in quiet)}
    expected = {n: quiet[0][n] for n in steady}
    bombing = threading.Event()
    bombs: list[int] = []

    def neighbour() -> None:
        while not bombing.is_set():
            backend.run(
                RunRequest(
                    snapshot=bomb,
                    tests=("tests/test_zz_bomb.py",),
                    limits=Limits(wall_seconds=60, max_processes=64),
                )
            )
            bombs.append(1)

    def one_run(_index: int) -> str | list[str] | None:
        try:
            result = backend.run(request)
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"[:300]
        if set(result.tests) != set(quiet[0]) or result.collection_errors:
            return f"tests missing or not collected: {len(result.tests)} of {len(quiet[0])}"
        differ = [n for n in steady if result.tests[n].outcome != expected[n]]
        return differ or None

    thread = threading.Thread(target=neighbour, daemon=True)
    thread.start()
    try:
        time.sleep(1.0)  # the first bomb is going off
        with ThreadPoolExecutor(max_workers=4) as pool:
            found = [p for p in pool.map(one_run, range(runs)) if p is not None]
    finally:
        bombing.set()
        thread.join()
    # The bombs are done: tests that differed beside them and also vary on their own are flaky.
    differing = sorted({n for p in found if isinstance(p, list) for n in p})
    flaky = _varies_quietly(backend, request, differing) if differing else set()
    problems = []
    for problem in found:
        if isinstance(problem, list):
            if harmed := [n for n in problem if n not in flaky]:
                problems.append(f"outcomes differ: {harmed}")
        else:
            problems.append(problem)
    return {
        "runs": runs,
        "failed": len(problems),
        "problems": problems[:5],
        "bomb_runs": len(bombs),
    }


def _varies_quietly(backend, request: RunRequest, nodeids: list[str]) -> set[str]:
    """Which of these tests change outcome over 8 quiet runs of their own (flaky, not harmed)."""
    seen: dict[str, set] = {n: set() for n in nodeids}
    for _ in range(8):
        tests = backend.run(replace(request, tests=tuple(nodeids))).tests
        for nodeid in nodeids:
            if nodeid in tests:
                seen[nodeid].add(tests[nodeid].outcome)
    return {nodeid for nodeid, outcomes in seen.items() if len(outcomes) > 1}


# ---------------------------------------------------------------------------------------------


def environment_setup(backend, ledger: BenchTask, notes: list[str], *, quick: bool) -> dict:
    """(c) the measured repository's environment: built now if missing, then warm lookups."""
    root = backend.root
    note(f"environment of {ledger.repository} under {root}")
    fresh_root = not any(backend.environments.envs.iterdir())
    with stopwatch() as took:
        env_key, built_now = backend.ensure_environment(ledger.snapshot, EnvironmentSpec())
    if built_now:
        notes.append(
            f"the bench root had no {ledger.repository} environment: built now in "
            f"{took[0]:.1f} s ({'a fresh root' if fresh_root else 'a new key'})"
        )
    warm_lookups = []
    for _ in range(20 if quick else 50):
        with stopwatch() as lookup:
            _key, built = backend.ensure_environment(ledger.snapshot, EnvironmentSpec())
        assert not built
        warm_lookups.append(lookup[0])
    return {
        "key": env_key,
        "first_build": took[0] if built_now else None,
        "fresh_root": fresh_root,
        "warm": warm_lookups,
    }


def overhead(backend, ledger: BenchTask, copy: PlainCopy, notes: list[str], *, quick: bool):
    """(a) + (b): bare pytest against one validation pass / 2, interleaved."""
    repeats = 5 if quick else 15  # bare pytest runs
    passes = 3 if quick else 8  # validation passes (two sandbox runs each)
    note(f"bare pytest x{repeats} and validation passes x{passes} ({ledger.name})")
    warm = copy.bare_pytest()
    counted = reported_count(warm.stdout)
    if counted != len(ledger.nodeids):
        notes.append(
            f"bare pytest reported {counted} of {len(ledger.nodeids)} tests: "
            f"{warm.stdout.strip().splitlines()[-1:]}"
        )
    first_outcome, _ = validate_recording(ledger, backend, **SINGLE)  # warm-up
    bare, validation, bare_cpu, validation_cpu = [], [], [], []
    for index in range(max(repeats, passes)):
        if index < repeats:
            with measured() as spent:
                copy.bare_pytest()
            bare.append(spent["wall"])
            bare_cpu.append(spent["cpu"])
        if index < passes:
            with measured() as spent:
                _outcome, results = validate_recording(ledger, backend, **SINGLE)
            validation.append(spent["wall"])
            # The jailed processes are not this process's children to wait for: their CPU
            # time is the run cgroup's.
            jailed = sum(result.cpu_seconds or 0.0 for result in results)
            validation_cpu.append((spent["cpu"] + jailed) / 2)
    return {
        "verified": first_outcome.verified,
        "bare": bare,
        "bare_cpu": bare_cpu,
        "validation": validation,
        "validation_cpu": validation_cpu,
    }


def breakdown(backend, ledger: BenchTask, copy: PlainCopy, scratch: Path, *, quick: bool):
    """Where a sandbox run's time goes, and what the test process holds beyond bare pytest.
    Each round measures its own baseline, so that a busy machine skews all parts alike."""
    rounds = 3 if quick else 8
    note(f"profiling sandbox runs x{2 * rounds}")
    parts: dict[str, list[dict[str, float]]] = {
        name: [] for name in ("bare", "direct", "jail", "with_coverage", "pytest_only")
    }
    with profiled(backend) as spent:
        for _ in range(rounds):
            with measured() as took:
                copy.bare_pytest()
            parts["bare"].append(took)
            validate_recording(ledger, backend, **SINGLE)
            with measured() as took:
                copy.sandbox_command_without_isolation()
            parts["direct"].append(took)
            parts["jail"].append(jail_start(backend))
            parts["with_coverage"].append(copy.importing("pytest, coverage"))
            parts["pytest_only"].append(copy.importing("pytest"))
    jail_starts = [jail_start(backend)["wall"] for _ in range(10 if quick else 40)]
    steps = {label: medians(values) for label, values in spent.items() if values}
    whole = steps.pop("whole run")
    steps["other (Python between the steps)"] = {
        kind: max(0.0, whole[kind] - sum(step[kind] for step in steps.values()))
        for kind in ("wall", "cpu")
    }
    late = exit_detection_seconds(scratch, rounds)
    bare_part = medians(parts["bare"])
    inside = {
        "bare pytest (the baseline, same rounds)": bare_part,
        "+ plugin, file selection, JUnit XML (run directly)": minus(
            medians(parts["direct"]), bare_part
        ),
        "+ jail: cgroup, launcher, bwrap, /bin/true": medians(parts["jail"]),
        "+ supervise() noticing the exit late": {"wall": median(late), "cpu": 0.0},
    }
    accounted = {kind: sum(part[kind] for part in inside.values()) for kind in ("wall", "cpu")}
    test_process = spent["test process (cgroup + launcher + bwrap + pytest)"]
    inside["rest (noise; jailed vs direct)"] = minus(medians(test_process), accounted)
    inside["of the plugin: `import coverage`, unused"] = minus(
        medians(parts["with_coverage"]), medians(parts["pytest_only"])
    )
    return {"steps": steps, "whole": whole, "inside": inside, "jail_starts": jail_starts}


def second_task_reuse(backend, ledger, ledger_second, setup: dict, notes, *, quick: bool):
    """(c) a second task on the same repository reuses the environment; full mode also builds
    environments under a new key and in a fresh root."""
    new_key = cold = None
    if quick:
        notes.append(
            "--quick builds no environment on purpose (15-30 s each): cold and new-key "
            "figures come from a full run, or from the bench root's own first build"
        )
    else:
        note("building an environment under a new key (warm wheelhouse)")
        new_key = environment_figures(ledger, ledger_second, backend.root, fresh=False)
        note("building an environment in a fresh sandbox root (empty wheelhouse)")
        cold = environment_figures(ledger, ledger_second, backend.root, fresh=True)
    first_build = setup["first_build"]
    cold_seconds = cold["seconds"] if cold else (first_build if setup["fresh_root"] else None)
    new_key_seconds = (
        new_key["seconds"] if new_key else (None if setup["fresh_root"] else first_build)
    )
    _outcome, second_results = validate_recording(ledger_second, backend, **SINGLE)
    built_elsewhere = [figures for figures in (new_key, cold) if figures]
    return {
        "cold_seconds": cold_seconds,
        "new_key_seconds": new_key_seconds,
        "rebuilt": any(r.environment_built for r in second_results)
        or any(figures["second_task_rebuilt"] for figures in built_elsewhere),
        "same_key": all(r.environment_key == setup["key"] for r in second_results)
        and all(figures["second_task_same_key"] for figures in built_elsewhere),
    }


def validations_per_minute(backend, samples, ledger, ledger_second, notes, *, quick: bool):
    """(d) task validations finished per minute by 2 worker processes."""
    if quick:
        tasks = [ledger, ledger_second] * 2
        options = {"reruns": 1, "interaction": False}
    else:
        marktext = fixture_task("marktext_toc", samples)
        tasks = [ledger, marktext, ledger_second, second_task(marktext)] * 3
        options = {"reruns": 3, "interaction": True}
        note("environment of marktext")
        with stopwatch() as took:
            _key, built = backend.ensure_environment(marktext.snapshot, EnvironmentSpec())
        if built:
            notes.append(f"marktext's environment was built before (d), in {took[0]:.1f} s")
    note(f"throughput: {len(tasks)} validations with {WORKERS} worker processes")
    items = [(task.name, task.validation_input(**options)) for task in tasks]
    flow = throughput(backend.root, items)
    notes.append(
        "ledger_allocation holds a test that fails half the time on purpose: a validation "
        "that does not catch it as flaky (always with reruns=1) ends unverified whenever the "
        "reference run fails it, so 'verified' counts vary from run to run"
    )
    return {"options": options, **flow}


def main() -> None:
    args_parser = parser(__doc__.split("\n", 1)[0])
    args_parser.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="sandbox root")
    args = args_parser.parse_args()
    quick = args.quick
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    backend = get_backend("process", root=args.root)
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="specloom-bench-") as scratch_name:
        scratch = Path(scratch_name)
        note("importing the sample repositories and the hand-made tasks")
        samples = import_samples(scratch / "repos")
        ledger = fixture_task("ledger_allocation", samples)
        ledger_second = second_task(ledger)
        setup = environment_setup(backend, ledger, notes, quick=quick)
        copy = plain_copy(ledger, backend.environments.python(setup["key"]), scratch / "plain")
        ratio = overhead(backend, ledger, copy, notes, quick=quick)
        parts = breakdown(backend, ledger, copy, scratch, quick=quick)
        note("concurrent runs beside a fork-bombing neighbour")
        crowd = concurrency_with_fork_bomb(
            backend, ledger, with_fork_bomb(ledger), runs=8 if quick else 20
        )
        reuse = second_task_reuse(backend, ledger, ledger_second, setup, notes, quick=quick)
        flow = validations_per_minute(backend, samples, ledger, ledger_second, notes, quick=quick)
    figures = collect(
        backend, ledger, ledger_second, setup, ratio, parts, crowd, reuse, flow, notes
    )
    figures["load_average_1min"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    figures["seconds_total"] = round(time.perf_counter() - started, 1)
    report(figures)
    print_json_line(figures)


if __name__ == "__main__":
    main()
