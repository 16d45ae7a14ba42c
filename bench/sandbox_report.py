"""The sandbox benchmark's figures: collected in one dict (the JSON line), printed as tables."""

from __future__ import annotations

import os

from bench.common import median, ms, percentile, print_table

OVERHEAD_TARGET = 1.25
WORKERS = 2
ANCHOR = (
    "SWE-bench's Docker harness validates about 10-20 tasks a minute on 16 cores with 12 "
    "workers (about 0.6-1.3 tasks a minute per core), on real repositories with far larger "
    "test suites than these samples"
)


def folder_bytes(folder) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def collect(backend, ledger, ledger_second, setup, ratio, parts, crowd, reuse, flow, notes):
    bare, validation = ratio["bare"], ratio["validation"]
    per_run = [seconds / 2 for seconds in validation]
    overhead_ratio = median(per_run) / median(bare)
    steps, whole, inside = parts["steps"], parts["whole"], parts["inside"]
    done = flow["done"]
    per_minute = len(done) / flow["wall_seconds"] * 60
    return {
        "quick": flow["options"]["reruns"] == 1,
        "repository": ledger.repository,
        "task": ledger.name,
        "tests": len(ledger.nodeids),
        "isolation": backend.isolation,
        "bare_pytest_median_ms": ms(median(bare)),
        "bare_pytest_p95_ms": ms(percentile(bare, 95)),
        "bare_pytest_repeats": len(bare),
        "validation_pass_median_ms": ms(median(validation)),
        "validation_run_median_ms": ms(median(per_run)),
        "validation_run_p95_ms": ms(percentile(per_run, 95)),
        "validation_passes": len(validation),
        "overhead_ratio": round(overhead_ratio, 3),
        "overhead_target": OVERHEAD_TARGET,
        "bare_pytest_cpu_median_ms": ms(median(ratio["bare_cpu"])),
        "validation_run_cpu_median_ms": ms(median(ratio["validation_cpu"])),
        "overhead_ratio_cpu": round(median(ratio["validation_cpu"]) / median(ratio["bare_cpu"]), 3),
        "overhead_within_target": overhead_ratio <= OVERHEAD_TARGET,
        "first_task_verified": ratio["verified"],
        "jail_start_ms_p50": ms(median(parts["jail_starts"])),
        "jail_start_ms_p95": ms(percentile(parts["jail_starts"], 95)),
        "concurrent_runs": crowd["runs"],
        "concurrent_runs_failed": crowd["failed"],
        "concurrent_run_problems": crowd["problems"],
        "fork_bomb_runs_alongside": crowd["bomb_runs"],
        "run_breakdown_median_ms": {label: ms(value["wall"]) for label, value in steps.items()},
        "run_breakdown_cpu_median_ms": {label: ms(value["cpu"]) for label, value in steps.items()},
        "run_total_median_ms": ms(whole["wall"]),
        "run_total_cpu_median_ms": ms(whole["cpu"]),
        "test_process_breakdown_ms": {label: ms(value["wall"]) for label, value in inside.items()},
        "test_process_breakdown_cpu_ms": {
            label: ms(value["cpu"]) for label, value in inside.items()
        },
        "env_cold_seconds": _rounded(reuse["cold_seconds"]),
        "env_new_key_seconds": _rounded(reuse["new_key_seconds"]),
        "env_wheelhouse_bytes": folder_bytes(backend.environments.wheelhouse_folder),
        "env_warm_ms": ms(median(setup["warm"])),
        "env_warm_p95_ms": ms(percentile(setup["warm"], 95)),
        "second_task": ledger_second.name,
        "second_task_rebuilt_environment": reuse["rebuilt"],
        "second_task_same_environment_key": reuse["same_key"],
        "tasks_validated": len(done),
        "tasks_verified": sum(1 for item in done if item["verified"]),
        "throughput_reruns": flow["options"]["reruns"],
        "throughput_interaction_check": flow["options"]["interaction"],
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
    }


def _rounded(value: float | None) -> float | None:
    return round(value, 2) if value is not None else None


def report(figures: dict) -> None:
    """Every figure's table, (a) to (e), then the notes and the machine's load."""
    report_overhead(figures)
    report_breakdown(figures)
    report_environment(figures)
    report_throughput(figures)
    report_jail(figures)
    report_notes(figures)


def report_overhead(f: dict) -> None:
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


def report_breakdown(f: dict) -> None:
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


def report_environment(f: dict) -> None:
    rows = [
        (
            "cold, fresh root, empty wheelhouse (s)",
            f["env_cold_seconds"] or "skipped in --quick (run without --quick)",
        ),
        (
            "new key in the bench root, warm wheelhouse (s)",
            f["env_new_key_seconds"] or "skipped in --quick (run without --quick)",
        ),
        ("warm: cached lookup median / p95 (ms)", f"{f['env_warm_ms']} / {f['env_warm_p95_ms']}"),
        ("bench root's wheelhouse (bytes)", f["env_wheelhouse_bytes"]),
        ("second task on the same repository", f["second_task"]),
        ("second_task_rebuilt_environment", f["second_task_rebuilt_environment"]),
        ("second task, same environment key", f["second_task_same_environment_key"]),
    ]
    print_table("(c) environment set-up", rows)


def report_throughput(f: dict) -> None:
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


def report_jail(f: dict) -> None:
    print_table(
        "(e) the jail: starts and neighbours",
        [
            (
                "no-op run in the jail p50 / p95 (ms)",
                f"{f['jail_start_ms_p50']} / {f['jail_start_ms_p95']}",
            ),
            (
                "concurrent_runs_failed (runs, 4 at a time, beside fork bombs)",
                f"{f['concurrent_runs_failed']} of {f['concurrent_runs']} "
                f"({f['fork_bomb_runs_alongside']} fork-bomb runs alongside)",
            ),
        ],
    )


def report_notes(f: dict) -> None:
    for line in f["notes"]:
        print(f"note: {line}")
    before, after = f["load_average_1min"]
    print(
        f"total {f['seconds_total']} s; load average {before} at the start, {after} at the end "
        f"on {f['cores']} cores (other work on the machine inflates wall times; CPU times move "
        "less)"
    )
