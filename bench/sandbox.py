"""Sandbox benchmark: what isolation and validation cost against bare pytest, on a sample repo.

    .venv/bin/python bench/sandbox.py [--quick] [--root /var/tmp/specloom-bench-sandbox]

Figures (the real `process` backend, real pytest; as root the runs use network namespaces and
the `nobody` user):

(a) bare pytest: the task's tests (the same node ids, the same files: base + reference + tests
    in a plain folder) run by the warm environment's interpreter directly, no isolation;
(b) one validation pass (base + tests, then reference + tests; reruns=1, no interaction check)
    divided by 2, against (a): `overhead_ratio` (target <= 1.25); a breakdown of one sandbox
    run tells where the time goes;
(c) environment set-up: cold (a fresh sandbox root, empty pip cache; full mode only), a new
    environment key in the bench root, and a warm (cached) lookup; plus the proof that a second
    task on the same repository reuses the environment (RunResult.environment_built);
(d) tasks validated per minute by 2 worker processes, each with its own backend on one root.

The last line of standard output is one JSON object of the figures.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

if __package__ in (None, ""):  # run as `python bench/sandbox.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import (
    ROOT,
    measured,
    median,
    ms,
    note,
    parser,
    percentile,
    print_json_line,
    print_table,
    stopwatch,
)
from workers import gitstore
from workers.patchparts import PatchPart, split_by_function
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
from workers.sandbox.isolation import launch_argv, supervisor_environment
from workers.sandbox.pytest_invocation import (
    RunPaths,
    pytest_argv,
    sandbox_environment,
    selected_paths,
    write_support_files,
)
from workers.sandbox.supervise import supervise
from workers.validation import ValidationInput, ValidationOutcome, validate_task

DEFAULT_ROOT = Path("/var/tmp/specloom-bench-sandbox")
FIXTURES = ROOT / "tests" / "fixtures" / "tasks"
EXAMPLES = ROOT / "examples" / "repos"
OVERHEAD_TARGET = 1.25
WORKERS = 2
ANCHOR = (
    "SWE-bench's Docker harness validates about 10-20 tasks a minute on 16 cores with 12 "
    "workers (about 0.6-1.3 tasks a minute per core), on real repositories with far larger "
    "test suites than these samples"
)
# The second task on a repository: the first task with one reference function already restored
# in its base (a different base commit, the same dependency files).
SECOND_TASK_RESTORES = {
    "ledger_allocation": "ReservationBook._allocation_plan",
    "marktext_toc": "_nest",
}


@dataclass(frozen=True)
class BenchTask:
    name: str
    repository: str
    snapshot: Snapshot
    reference_patch: str
    test_patch: str
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    parts: tuple[PatchPart, ...]
    # base + reference + tests, committed: the files the bare pytest baseline runs.
    solved_with_tests: str

    @property
    def nodeids(self) -> tuple[str, ...]:
        return (*self.fail_to_pass, *self.pass_to_pass)

    def validation_input(
        self, *, reruns: int, interaction: bool, environment: EnvironmentSpec | None = None
    ) -> ValidationInput:
        return ValidationInput(
            snapshot=self.snapshot,
            environment=environment or EnvironmentSpec(),
            reference_patch=self.reference_patch,
            test_patch=self.test_patch,
            fail_to_pass=self.fail_to_pass,
            pass_to_pass=self.pass_to_pass,
            reruns=reruns,
            limits=Limits(),
            reference_parts=self.parts if interaction else (),
        )


# ---------------------------------------------------------------------------------------------
# Tasks on the sample repositories


def import_samples(folder: Path) -> dict[str, Snapshot]:
    """Each sample repository as a one-commit bare repository under `folder`."""
    return {
        name: Snapshot(
            folder / f"{name}.git",
            gitstore.commit_folder(EXAMPLES / name, folder / f"{name}.git", f"Sample {name}"),
        )
        for name in ("ledger", "marktext")
    }


def _parts(git_dir: Path, base: str, reference: str) -> tuple[PatchPart, ...]:
    return tuple(split_by_function(reference, lambda path: gitstore.read_file(git_dir, base, path)))


def _solved_with_tests(git_dir: Path, base: str, reference: str, tests: str) -> str:
    solved = gitstore.commit_patch(git_dir, base, reference, "Reference")
    return gitstore.commit_patch(git_dir, solved, tests, "Reference + tests")


def fixture_task(name: str, samples: dict[str, Snapshot]) -> BenchTask:
    folder = FIXTURES / name
    spec = json.loads((folder / "task.json").read_text(encoding="utf-8"))
    sample = samples[spec["repository"]]
    base = gitstore.commit_patch(
        sample.git_dir, sample.commit, (folder / "base.patch").read_text(), f"Task base: {name}"
    )
    reference = (folder / "reference.patch").read_text()
    tests = (folder / "tests.patch").read_text()
    roles = {role: [] for role in ("FAIL_TO_PASS", "PASS_TO_PASS")}
    for test in spec["tests"]:
        roles[test["intended_role"]].append(test["nodeid"])
    return BenchTask(
        name=name,
        repository=spec["repository"],
        snapshot=Snapshot(sample.git_dir, base),
        reference_patch=reference,
        test_patch=tests,
        fail_to_pass=tuple(roles["FAIL_TO_PASS"]),
        pass_to_pass=tuple(roles["PASS_TO_PASS"]),
        parts=_parts(sample.git_dir, base, reference),
        solved_with_tests=_solved_with_tests(sample.git_dir, base, reference, tests),
    )


def second_task(first: BenchTask) -> BenchTask:
    """Another task on the same repository: a new base commit, the same dependency files."""
    git_dir, base = first.snapshot.git_dir, first.snapshot.commit
    restored = SECOND_TASK_RESTORES[first.name]
    part = next(part for part in first.parts if part.name.endswith(f"::{restored}"))
    new_base = gitstore.commit_patch(git_dir, base, part.patch, f"Task base: {restored} kept")
    solved = gitstore.commit_patch(git_dir, base, first.reference_patch, "Reference")
    reference = gitstore.diff_commits(git_dir, new_base, solved)
    return replace(
        first,
        name=f"{first.name}_without_{restored.rsplit('.', 1)[-1].lstrip('_')}",
        snapshot=Snapshot(git_dir, new_base),
        reference_patch=reference,
        parts=_parts(git_dir, new_base, reference),
    )


# ---------------------------------------------------------------------------------------------
# (a) bare pytest and the sandbox's own pytest command, without isolation


@dataclass(frozen=True)
class PlainCopy:
    """The task's solved files in a plain folder, run with the environment's interpreter."""

    work: Path
    python: Path
    nodeids: tuple[str, ...]

    def environment(self) -> dict[str, str]:
        pythonpath = [str(self.work / "src")] if (self.work / "src").is_dir() else []
        pythonpath.append(str(self.work))
        return {
            "PATH": f"{self.python.parent}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.work.parent / "home"),
            "LANG": "C.UTF-8",
            "PYTHONPATH": ":".join(pythonpath),
            # As in the sandbox, whose fresh copies never have compiled files to reuse.
            "PYTHONDONTWRITEBYTECODE": "1",
        }

    def bare_pytest(self) -> subprocess.CompletedProcess[str]:
        argv = [str(self.python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *self.nodeids]
        return subprocess.run(
            argv,
            cwd=self.work,
            env=self.environment(),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    def sandbox_command_without_isolation(self) -> None:
        """The sandbox's pytest command line (plugin, selection, JUnit XML), run directly."""
        scratch = self.work.parent / f"cmd-{uuid.uuid4().hex}"
        folders = {name: scratch / name for name in ("support", "out")}
        for folder in folders.values():
            folder.mkdir(parents=True)
        paths = RunPaths(
            python=str(self.python),
            work=str(self.work),
            support=str(folders["support"]),
            out=str(folders["out"]),
            home=str(self.work.parent / "home"),
            tmp=str(scratch),
        )
        try:
            write_support_files(folders["support"], paths, tests=self.nodeids, coverage=False)
            argv = pytest_argv(
                paths,
                tests=self.nodeids,
                file_args=selected_paths(self.nodeids, self.work),
                coverage=False,
            )
            subprocess.run(
                argv,
                cwd=self.work,
                env=sandbox_environment(paths, has_src_layout=(self.work / "src").is_dir()),
                capture_output=True,
                timeout=300,
                check=False,
            )
        finally:
            shutil.rmtree(scratch)

    def importing(self, modules: str) -> dict[str, float]:
        """One start of the environment's interpreter importing `modules`: wall and CPU."""
        with measured() as spent:
            subprocess.run(
                [str(self.python), "-c", f"import {modules}"],
                env=self.environment(),
                capture_output=True,
                timeout=60,
                check=True,
            )
        return spent


def plain_copy(task: BenchTask, python: Path, folder: Path) -> PlainCopy:
    work = folder / "work"
    gitstore.archive_to(task.snapshot.git_dir, task.solved_with_tests, work)
    (folder / "home").mkdir(exist_ok=True)
    return PlainCopy(work=work, python=python, nodeids=task.nodeids)


def reported_count(output: str) -> int:
    """How many tests a `pytest -q` summary line reports (passed, failed, errors...)."""
    summary = output.strip().splitlines()[-1] if output.strip() else ""
    return sum(int(n) for n in re.findall(r"(\d+) (?:passed|failed|error|errors|skipped)", summary))


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
    ("select files + support files", process_module, "write_support_files"),
    ("test process (unshare + init + pytest)", process_module, "supervise"),
    ("JUnit XML + events parsing", process_module, "record_outcomes"),
    ("cleanup (remove the run folder)", process_module, "remove_tree"),
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

    targets = [
        (backend.environments if owner == "environments" else owner, name, label)
        for label, owner, name in PROFILED_STEPS
    ]
    targets.append((backend, "run", "whole run"))
    try:
        for owner, name, label in targets:
            original = getattr(owner, name)
            originals.append((owner, name, original))
            setattr(owner, name, wrap(label, original))
        yield spent
    finally:
        for owner, name, original in reversed(originals):
            if owner is backend or owner is backend.environments:
                delattr(owner, name)  # back to the class's method
            else:
                setattr(owner, name, original)


def namespace_start(backend, cwd: Path) -> dict[str, float]:
    """unshare + the init (loopback, tmpfs) + dropping to the sandbox user: /bin/true."""
    launch = launch_argv(
        backend.isolation,
        init=backend.init,
        argv=["/bin/true"],
        env={"PATH": "/usr/bin:/bin"},
        cwd=Path("/"),  # a folder the tests' view keeps (the host's /tmp is covered)
        limits=Limits(),
        keep_visible=[backend.root, Path(sys.executable).resolve()],
    )
    with measured() as spent:
        subprocess.run(launch, env=supervisor_environment(), cwd=cwd, check=True)
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


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


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

    fresh: in a new sandbox root (empty pip cache), removed afterwards; otherwise a new key (a
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


def main() -> None:
    args_parser = parser(__doc__.split("\n", 1)[0])
    args_parser.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="sandbox root")
    args = args_parser.parse_args()
    quick = args.quick
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    repeats = 5 if quick else 15  # bare pytest runs
    passes = 3 if quick else 8  # validation passes (two sandbox runs each)
    profile_rounds = 3 if quick else 8  # each: bare pytest, a validation pass, parts of a run

    backend = get_backend("process", root=args.root)
    root = backend.root
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="specloom-bench-") as scratch_name:
        scratch = Path(scratch_name)
        note("importing the sample repositories and the hand-made tasks")
        samples = import_samples(scratch / "repos")
        ledger = fixture_task("ledger_allocation", samples)
        ledger_second = second_task(ledger)

        # (c) the environment of the measured repository; cold only if this root never had it.
        note(f"environment of {ledger.repository} under {root}")
        fresh_root = not any(backend.environments.envs.iterdir()) and not any(
            backend.environments.pip_cache.iterdir()
        )
        with stopwatch() as took:
            env_key, built_now = backend.ensure_environment(ledger.snapshot, EnvironmentSpec())
        first_build = took[0] if built_now else None
        if built_now:
            notes.append(
                f"the bench root had no {ledger.repository} environment: built now in "
                f"{took[0]:.1f} s ({'a fresh root' if fresh_root else 'a new key'})"
            )
        warm_lookups = []
        for _ in range(20 if quick else 50):
            with stopwatch() as took:
                _key, built = backend.ensure_environment(ledger.snapshot, EnvironmentSpec())
            assert not built
            warm_lookups.append(took[0])
        python = backend.environments.python(env_key)

        # (a) + (b), interleaved so that drift on the machine touches both alike.
        note(f"bare pytest x{repeats} and validation passes x{passes} ({ledger.name})")
        copy = plain_copy(ledger, python, scratch / "plain")
        warm = copy.bare_pytest()
        counted = reported_count(warm.stdout)
        if counted != len(ledger.nodeids):
            notes.append(
                f"bare pytest reported {counted} of {len(ledger.nodeids)} tests: "
                f"{warm.stdout.strip().splitlines()[-1:]}"
            )
        single = {"reruns": 1, "interaction": False}
        first_outcome, _ = validate_recording(ledger, backend, **single)  # warm-up
        bare, validation, bare_cpu, validation_cpu = [], [], [], []
        for index in range(max(repeats, passes)):
            if index < repeats:
                with measured() as spent:
                    copy.bare_pytest()
                bare.append(spent["wall"])
                bare_cpu.append(spent["cpu"])
            if index < passes:
                with measured() as spent:
                    validate_recording(ledger, backend, **single)
                validation.append(spent["wall"])
                validation_cpu.append(spent["cpu"] / 2)
        per_run = [seconds / 2 for seconds in validation]
        ratio = median(per_run) / median(bare)
        ratio_cpu = median(validation_cpu) / median(bare_cpu)

        # The breakdown of sandbox runs, and what the test process holds beyond bare pytest.
        # Each round measures its own baseline, so that a busy machine skews all parts alike.
        note(f"profiling sandbox runs x{2 * profile_rounds}")
        parts: dict[str, list[dict[str, float]]] = {
            name: [] for name in ("bare", "direct", "namespace", "with_coverage", "pytest_only")
        }
        with profiled(backend) as spent:
            for _ in range(profile_rounds):
                with measured() as took:
                    copy.bare_pytest()
                parts["bare"].append(took)
                validate_recording(ledger, backend, **single)
                with measured() as took:
                    copy.sandbox_command_without_isolation()
                parts["direct"].append(took)
                parts["namespace"].append(namespace_start(backend, scratch))
                parts["with_coverage"].append(copy.importing("pytest, coverage"))
                parts["pytest_only"].append(copy.importing("pytest"))
        test_process = spent["test process (unshare + init + pytest)"]
        late = exit_detection_seconds(scratch, profile_rounds)

        # (c) a second task on the same repository, on an environment built just before it.
        # Builds take 15-30 s on 2 cores: --quick reports only a build it could not avoid.
        new_key = cold = None
        if quick:
            notes.append(
                "--quick builds no environment on purpose (15-30 s each): cold and new-key "
                "figures come from a full run, or from the bench root's own first build"
            )
        else:
            note("building an environment under a new key (warm pip cache)")
            new_key = environment_figures(ledger, ledger_second, root, fresh=False)
            note("building an environment in a fresh sandbox root (empty pip cache)")
            cold = environment_figures(ledger, ledger_second, root, fresh=True)
        cold_seconds = cold["seconds"] if cold else (first_build if fresh_root else None)
        new_key_seconds = new_key["seconds"] if new_key else (None if fresh_root else first_build)
        # And the second task in the bench root, where the first task's environment is cached.
        _outcome, second_results = validate_recording(ledger_second, backend, **single)
        rebuilt = any(r.environment_built for r in second_results) or any(
            figures["second_task_rebuilt"] for figures in (new_key, cold) if figures
        )
        same_key = all(r.environment_key == env_key for r in second_results)

        # (d) throughput.
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
        flow = throughput(root, items)
        done = flow["done"]
        per_minute = len(done) / flow["wall_seconds"] * 60
        notes.append(
            "ledger_allocation holds a test that fails half the time on purpose: a validation "
            "that does not catch it as flaky (always with reruns=1) ends unverified whenever the "
            "reference run fails it, so 'verified' counts vary from run to run"
        )

    # -----------------------------------------------------------------------------------------
    # Every step runs once per sandbox run: medians per run, wall and CPU.
    steps = {label: medians(values) for label, values in spent.items() if values}
    whole = steps.pop("whole run")
    steps["other (Python between the steps)"] = {
        kind: max(0.0, whole[kind] - sum(step[kind] for step in steps.values()))
        for kind in ("wall", "cpu")
    }
    bare_part = medians(parts["bare"])
    inside = {
        "bare pytest (the baseline, same rounds)": bare_part,
        "+ plugin, file selection, JUnit XML (run directly)": minus(
            medians(parts["direct"]), bare_part
        ),
        "+ unshare, init (lo, tmpfs), setuid nobody (/bin/true)": medians(parts["namespace"]),
        "+ supervise() noticing the exit late": {"wall": median(late), "cpu": 0.0},
    }
    accounted = {kind: sum(part[kind] for part in inside.values()) for kind in ("wall", "cpu")}
    inside["rest (noise; namespaced vs direct)"] = minus(medians(test_process), accounted)
    inside["of the plugin: `import coverage`, unused"] = minus(
        medians(parts["with_coverage"]), medians(parts["pytest_only"])
    )

    figures = {
        "quick": quick,
        "repository": ledger.repository,
        "task": ledger.name,
        "tests": len(ledger.nodeids),
        "isolation": backend.isolation.name,
        "bare_pytest_median_ms": ms(median(bare)),
        "bare_pytest_p95_ms": ms(percentile(bare, 95)),
        "bare_pytest_repeats": len(bare),
        "validation_pass_median_ms": ms(median(validation)),
        "validation_run_median_ms": ms(median(per_run)),
        "validation_run_p95_ms": ms(percentile(per_run, 95)),
        "validation_passes": len(validation),
        "overhead_ratio": round(ratio, 3),
        "overhead_target": OVERHEAD_TARGET,
        "bare_pytest_cpu_median_ms": ms(median(bare_cpu)),
        "validation_run_cpu_median_ms": ms(median(validation_cpu)),
        "overhead_ratio_cpu": round(ratio_cpu, 3),
        "overhead_within_target": ratio <= OVERHEAD_TARGET,
        "first_task_verified": first_outcome.verified,
        "run_breakdown_median_ms": {label: ms(value["wall"]) for label, value in steps.items()},
        "run_breakdown_cpu_median_ms": {label: ms(value["cpu"]) for label, value in steps.items()},
        "run_total_median_ms": ms(whole["wall"]),
        "run_total_cpu_median_ms": ms(whole["cpu"]),
        "test_process_breakdown_ms": {label: ms(value["wall"]) for label, value in inside.items()},
        "test_process_breakdown_cpu_ms": {
            label: ms(value["cpu"]) for label, value in inside.items()
        },
        "env_cold_seconds": round(cold_seconds, 2) if cold_seconds is not None else None,
        "env_new_key_seconds": (round(new_key_seconds, 2) if new_key_seconds is not None else None),
        "env_pip_cache_bytes": folder_bytes(backend.environments.pip_cache),
        "env_warm_ms": ms(median(warm_lookups)),
        "env_warm_p95_ms": ms(percentile(warm_lookups, 95)),
        "second_task": ledger_second.name,
        "second_task_rebuilt_environment": rebuilt,
        "second_task_same_environment_key": same_key
        and all(figures["second_task_same_key"] for figures in (new_key, cold) if figures),
        "tasks_validated": len(done),
        "tasks_verified": sum(1 for item in done if item["verified"]),
        "throughput_reruns": options["reruns"],
        "throughput_interaction_check": options["interaction"],
        "throughput_sandbox_runs": sum(item["runs"] for item in done),
        "throughput_wall_seconds": round(flow["wall_seconds"], 2),
        "task_validation_median_seconds": round(median([i["seconds"] for i in done]), 2),
        "tasks_per_minute_2_workers": round(per_minute, 1),
        "tasks_per_minute_per_core": round(per_minute / (os.cpu_count() or 1), 1),
        "throughput_rebuilt_environment": any(item["built"] for item in done),
        "workers": WORKERS,
        "cores": os.cpu_count(),
        "anchor": ANCHOR,
        "notes": notes,
        "load_average_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "seconds_total": round(time.perf_counter() - started, 1),
    }
    report(figures)
    print_json_line(figures)


def report(figures: dict) -> None:
    f = figures
    print_table(
        f"(a)+(b) bare pytest vs one validation pass / 2 - {f['task']} ({f['tests']} tests), "
        f"isolation {f['isolation']}",
        [
            (
                "bare pytest median / p95 (ms)",
                f"{f['bare_pytest_median_ms']} / "
                f"{f['bare_pytest_p95_ms']}  (n={f['bare_pytest_repeats']})",
            ),
            (
                "validation pass median (ms)",
                f"{f['validation_pass_median_ms']}  "
                f"(n={f['validation_passes']}, base+tests then reference+tests)",
            ),
            (
                "per sandbox run median / p95 (ms)",
                f"{f['validation_run_median_ms']} / {f['validation_run_p95_ms']}",
            ),
            (
                "overhead_ratio (target <= 1.25)",
                f"{f['overhead_ratio']}  "
                f"({'within' if f['overhead_within_target'] else 'ABOVE'} target)",
            ),
            (
                "CPU time: bare / per run (ms), ratio",
                f"{f['bare_pytest_cpu_median_ms']} / {f['validation_run_cpu_median_ms']}, "
                f"{f['overhead_ratio_cpu']}  (user+system, children included)",
            ),
        ],
    )
    total, total_cpu = f["run_total_median_ms"], f["run_total_cpu_median_ms"]
    cpu = f["run_breakdown_cpu_median_ms"]
    print_table(
        f"where one sandbox run's time goes (medians per step; run total {total} ms wall, "
        f"{total_cpu} ms CPU)",
        [
            (label, f"{value:8.1f} ms  {100 * value / total:5.1f}%   CPU {cpu[label]:7.1f} ms")
            for label, value in f["run_breakdown_median_ms"].items()
        ],
    )
    cpu = f["test_process_breakdown_cpu_ms"]
    print_table(
        "inside the test process (medians; differences of separate measurements, wall and CPU)",
        [
            (label, f"{value:8.1f} ms   CPU {cpu[label]:7.1f} ms")
            for label, value in f["test_process_breakdown_ms"].items()
        ],
    )
    rows = [
        (
            "cold, fresh root, empty pip cache (s)",
            f["env_cold_seconds"] or "skipped in --quick (run without --quick)",
        ),
        (
            "new key in the bench root, warm pip cache (s)",
            f["env_new_key_seconds"] or "skipped in --quick (run without --quick)",
        ),
        ("warm: cached lookup median / p95 (ms)", f"{f['env_warm_ms']} / {f['env_warm_p95_ms']}"),
        ("bench root's pip cache (bytes)", f["env_pip_cache_bytes"]),
        ("second task on the same repository", f["second_task"]),
        ("second_task_rebuilt_environment", f["second_task_rebuilt_environment"]),
        ("second task, same environment key", f["second_task_same_environment_key"]),
    ]
    print_table("(c) environment set-up", rows)
    print_table(
        f"(d) throughput, {f['workers']} worker processes on {f['cores']} cores",
        [
            ("task validations (verified)", f"{f['tasks_validated']} ({f['tasks_verified']})"),
            (
                "reruns / interaction check",
                f"{f['throughput_reruns']} / {f['throughput_interaction_check']}",
            ),
            (
                "sandbox runs, wall time (s)",
                f"{f['throughput_sandbox_runs']}, {f['throughput_wall_seconds']}",
            ),
            ("one validation, median (s)", f["task_validation_median_seconds"]),
            ("tasks_per_minute_2_workers", f["tasks_per_minute_2_workers"]),
            ("tasks per minute per core", f["tasks_per_minute_per_core"]),
            ("anchor", f["anchor"]),
        ],
    )
    for line in f["notes"]:
        print(f"note: {line}")
    before, after = f["load_average_1min"]
    print(
        f"total {f['seconds_total']} s; load average {before} at the start, {after} at the end "
        f"on {f['cores']} cores (other work on the machine inflates wall times; CPU times move "
        "less)"
    )


if __name__ == "__main__":
    main()
