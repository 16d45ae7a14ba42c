"""The pages benchmark's data: seeded once with COPY, one function per table (or pair of tables),
and remembered by scale so that the next run at the same scale reuses it.

Every task, spec and test gets a predictable id (see `spec_id` and `test_id`), so each step can
link to the rows of another without reading them back. Every 50th task is heavy: real patches
from the fixture task, and the trajectories.
"""

from __future__ import annotations

import json
import random
import time

from bench.common import ROOT, note

KINDS = ["functional", "interface", "error-handling", "security", "performance", "compatibility"]
STATUSES = ["needs_review"] * 5 + [
    "draft",
    "validating",
    "changes_requested",
    "approved",
    "rejected",
]
FIXTURE = ROOT / "tests" / "fixtures" / "tasks" / "marktext_toc"
HEAVY_EVERY = 50  # every 50th task carries real patches and the trajectories
CREATED = "2026-01-01T00:00:00+00:00"
SMALL_PATCH = (
    "diff --git a/pkg/mod.py b/pkg/mod.py\n--- a/pkg/mod.py\n+++ b/pkg/mod.py\n"
    "@@ -1,3 +1,3 @@\n def f(x):\n-    raise NotImplementedError\n+    return x * 2\n \n"
)
MODELS = ["qwen3-coder-30b", "gpt-oss-20b", "devstral-24b", "glm-4.6", "kimi-k2"]


def unique_patch(patch: str, n: int) -> str:
    """The same diff with its first added line marked: every task renders a patch of its own,
    so the process's diff cache cannot make repeated requests look faster than a first view."""
    lines = patch.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("+") and not line.startswith("+++"):
            lines[i] = f"{line}  # {n}"
            break
    return "\n".join(lines)


def spec_id(t: int, k: int, n_specs: int) -> int:
    return (t - 1) * n_specs + k + 1


def case_id(t: int, j: int, n_tests: int) -> int:
    return (t - 1) * n_tests + j + 1


def _copy(model, columns: list[str], rows) -> int:
    """COPY rows (tuples in `columns` order) into the model's table; other fields get defaults."""
    from django.db import connection
    from django.db.models import JSONField

    fields = [f for f in model._meta.concrete_fields]
    given = {c: i for i, c in enumerate(columns)}
    extra = []
    for f in fields:
        if f.column in given:
            continue
        if f.has_default():
            value = f.get_default()
            extra.append((f.column, json.dumps(value) if isinstance(f, JSONField) else value))
        elif f.null:
            extra.append((f.column, None))
        elif getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False):
            extra.append((f.column, CREATED))
    all_columns = columns + [c for c, _ in extra]
    extra_values = tuple(v for _, v in extra)
    table = model._meta.db_table
    count = 0
    with connection.cursor() as cursor:
        quoted = ", ".join(f'"{c}"' for c in all_columns)
        with cursor.cursor.copy(f'COPY "{table}" ({quoted}) FROM STDIN') as copy:
            for row in rows:
                copy.write_row(row + extra_values)
                count += 1
        # The table name comes from our own model, not from input.
        cursor.execute(
            f"SELECT setval(pg_get_serial_sequence('\"{table}\"', 'id'), "  # noqa: S608
            f'(SELECT COALESCE(MAX(id), 1) FROM "{table}"))'
        )
    return count


# --- seeding steps, in the order `seed` runs them ---------------------------------------------


def seed_people_and_repositories() -> tuple[list, list]:
    """A reviewer (member of every dataset), a curator, four datasets and 200 repositories."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.db import transaction

    from curation.models import Dataset, Repository

    users = get_user_model()
    with transaction.atomic():
        reviewer = users.objects.create_user("bench-reviewer", password=None)
        reviewer.groups.add(Group.objects.get(name="reviewer"))
        curator = users.objects.create_user("bench-curator", password=None)
        curator.groups.add(Group.objects.get(name="curator"))
        datasets = [Dataset.objects.create(name=f"bench-{i}", reviews_required=2) for i in range(4)]
        for dataset in datasets:
            dataset.members.add(reviewer)
        repos = Repository.objects.bulk_create(
            Repository(
                name=f"repo-{i}",
                source_kind="path",
                source="/nowhere",
                git_path=f"repos/repo-{i}.git",
                default_commit="0" * 40,
            )
            for i in range(200)
        )
    return datasets, repos


def seed_tasks(task_ids: range, datasets: list, repos: list) -> None:
    """Tasks in every status, origin and difficulty; heavy ones carry the fixture's patches."""
    from curation.models import Task

    reference = (FIXTURE / "reference.patch").read_text()
    tests_patch = (FIXTURE / "tests.patch").read_text()
    statement = json.loads((FIXTURE / "task.json").read_text())["problem_statement"]

    def task_row(t: int) -> tuple:
        heavy = t % HEAVY_EVERY == 0
        status = STATUSES[t % len(STATUSES)]
        return (
            t,
            repos[t % len(repos)].pk,
            datasets[t % 4].pk,
            t,
            f"specloom__bench-{t}",
            "0" * 40,
            f"Task {t}: implement {KINDS[t % 6]} behaviour of module {t % 97}",
            statement if heavy else f"Implement function f{t}.",
            status,
            ["procedural", "llm", "manual", "imported"][t % 4],
            ["", "<15m", "15m-1h", "1-4h", ">4h"][t % 5],
            unique_patch(reference, t) if heavy else SMALL_PATCH,
            unique_patch(tests_patch, t) if heavy else "",
            1,
            1 if status in ("needs_review", "approved") else None,
            0,
            CREATED,
            f"2026-01-{1 + t % 28:02d}T{t % 24:02d}:00:00+00:00",
        )

    columns = [
        "id",
        "repository_id",
        "dataset_id",
        "number",
        "instance_id",
        "base_commit",
        "title",
        "problem_statement",
        "status",
        "origin",
        "difficulty",
        "reference_patch",
        "test_patch",
        "revision",
        "validated_revision",
        "review_slots_taken",
        "created_at",
        "updated_at",
    ]
    _copy(Task, columns, (task_row(t) for t in task_ids))


def seed_specs(task_ids: range, n_specs: int) -> None:
    """`n_specs` specs per task, in a chain of three dependency edges."""
    from curation.models import SpecDependency, Specification

    _copy(
        Specification,
        ["id", "task_id", "key", "kind", "statement", "rationale", "order"],
        (
            (
                spec_id(t, k, n_specs),
                t,
                f"S{k + 1}",
                KINDS[(t + k) % 6],
                f"S{k + 1} of task {t}: the function raises ValueError on bad input "
                "and keeps state.",
                "",
                k,
            )
            for t in task_ids
            for k in range(n_specs)
        ),
    )
    _copy(
        SpecDependency,
        ["task_id", "from_spec_id", "to_spec_id", "relation", "evidence", "detail"],
        (
            (t, spec_id(t, k, n_specs), spec_id(t, k + 1, n_specs), "depends-on", evidence, "")
            for t in task_ids
            for k, evidence in ((0, "declared"), (1, "observed"), (2, "declared"))
        ),
    )


def seed_tests(task_ids: range, n_tests: int, n_specs: int) -> None:
    """`n_tests` tests per task in every role, each linked to one spec."""
    from curation.models import TestCase

    roles = ["FAIL_TO_PASS"] * 8 + ["PASS_TO_PASS"] * 3 + ["flaky"]
    columns = [
        "id",
        "task_id",
        "nodeid",
        "intended_role",
        "role",
        "code",
        "runs",
        "passes_base",
        "passes_reference",
        "needs_parts",
        "last_message",
    ]
    _copy(
        TestCase,
        columns,
        (
            (
                case_id(t, j, n_tests),
                t,
                f"tests/test_mod_{t % 13}.py::test_case_{j}[param {j} ≥ 1]",
                "PASS_TO_PASS" if roles[j] == "PASS_TO_PASS" else "FAIL_TO_PASS",
                roles[j],
                "",
                3,
                0,
                3,
                "[]",
                "",
            )
            for t in task_ids
            for j in range(n_tests)
        ),
    )
    _copy(
        TestCase.specs.through,
        ["testcase_id", "specification_id"],
        (
            (case_id(t, j, n_tests), spec_id(t, j % n_specs, n_specs))
            for t in task_ids
            for j in range(n_tests)
        ),
    )


def seed_findings(task_ids: range) -> None:
    """An open weak-test finding on every third task (the queue's "has findings" filter)."""
    from curation.models import Finding

    _copy(
        Finding,
        ["task_id", "kind", "severity", "message", "evidence", "source", "dismissed", "created_at"],
        (
            (
                t,
                "weak_test",
                "medium",
                f"an empty patch passes a test of task {t}",
                "{}",
                "heuristic",
                False,
                CREATED,
            )
            for t in task_ids
            if t % 3 == 0
        ),
    )


def seed_trajectories(heavy_tasks: list[int], n_traj: int, steps: int) -> list[tuple[int, int]]:
    """`n_traj` trajectories spread over the heavy tasks; (trajectory id, task id) pairs."""
    from curation.models import Trajectory

    reference = (FIXTURE / "reference.patch").read_text()
    per_task = max(1, n_traj // len(heavy_tasks))
    trajectories = [(i + 1, heavy_tasks[(i // per_task) % len(heavy_tasks)]) for i in range(n_traj)]
    columns = [
        "id",
        "task_id",
        "model_name",
        "scaffold",
        "source_format",
        "content_sha256",
        "final_patch",
        "exit_status",
        "step_count",
        "unsafe",
        "created_at",
    ]
    _copy(
        Trajectory,
        columns,
        (
            (
                pk,
                t,
                f"{MODELS[pk % 5]}-{pk // len(heavy_tasks)}",
                "swe-agent",
                "swe-agent",
                f"{pk:064x}",
                unique_patch(reference, -pk) if pk % 2 else "",
                "submitted",
                steps,
                False,
                CREATED,
            )
            for pk, t in trajectories
        ),
    )
    return trajectories


def seed_steps(trajectories: list[tuple[int, int]], steps: int) -> None:
    """`steps` steps per trajectory: actions and observations, every fifth observation long."""
    from curation.models import TrajectoryStep

    long_output = "\n".join(
        f"{n:4d} | line of repository output, quite long {n}" for n in range(120)
    )
    _copy(
        TrajectoryStep,
        ["trajectory_id", *TrajectoryStep.CONTENT_FIELDS, "extra"],
        (
            (
                pk,
                s,
                "assistant" if s % 2 == 0 else "tool",
                "action" if s % 2 == 0 else "observation",
                "",
                f"sed -n {s},{s + 40}p src/mod.py" if s % 2 == 0 else "",
                (long_output if s % 10 == 1 else f"ok: step {s} output") if s % 2 else "",
                f"Step {s}: read the module and fix the failing test." if s % 2 == 0 else "",
                "bash" if s % 2 == 0 else "",
                "",
                "{}",
            )
            for pk, _t in trajectories
            for s in range(steps)
        ),
    )


def seed_evaluations(trajectories: list[tuple[int, int]], n_specs: int) -> None:
    """One evaluation per trajectory and a verdict for each of its task's specs."""
    from curation.models import Evaluation, SpecResult

    rng = random.Random(7)
    columns = [
        "id",
        "trajectory_id",
        "task_revision",
        "patch_applied",
        "patch_error",
        "resolved",
        "test_outcomes",
        "touched_test_files",
        "flaky_tests",
        "run_seconds",
        "created_at",
    ]
    _copy(
        Evaluation,
        columns,
        (
            (
                pk,
                pk,
                1,
                True,
                "",
                ["full", "partial", "none"][pk % 3],
                "{}",
                "[]",
                "[]",
                12.5,
                CREATED,
            )
            for pk, _t in trajectories
        ),
    )
    _copy(
        SpecResult,
        ["evaluation_id", "spec_id", "satisfied"],
        (
            (pk, spec_id(t, k, n_specs), rng.random() < 0.6)
            for pk, t in trajectories
            for k in range(n_specs)
        ),
    )


def seed(scale: dict) -> dict:
    """Every step, the bulk ones in one transaction, then ANALYZE for the planner."""
    from django.db import connection, transaction

    datasets, repos = seed_people_and_repositories()
    n_tasks = scale["tasks"]
    task_ids = range(1, n_tasks + 1)
    heavy_tasks = [t for t in task_ids if t % HEAVY_EVERY == 0]
    started = time.perf_counter()

    def took() -> str:
        return f"{time.perf_counter() - started:.1f}s"

    with transaction.atomic():
        seed_tasks(task_ids, datasets, repos)
        note(f"tasks: {n_tasks} in {took()}")
        seed_specs(task_ids, scale["specs"])
        note(f"specs: {n_tasks * scale['specs']} in {took()}")
        seed_tests(task_ids, scale["tests"], scale["specs"])
        note(f"tests: {n_tasks * scale['tests']} in {took()}")
        seed_findings(task_ids)
        trajectories = seed_trajectories(heavy_tasks, scale["trajectories"], scale["steps"])
        seed_steps(trajectories, scale["steps"])
        note(f"trajectories: {scale['trajectories']} x {scale['steps']} steps in {took()}")
        seed_evaluations(trajectories, scale["specs"])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    note(f"seeded in {took()}")
    return {"heavy_tasks": heavy_tasks}


# --- remembering what was seeded --------------------------------------------------------------


def seeded_scale() -> dict | None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS bench_pages_seed (scale jsonb NOT NULL)")
        cursor.execute("SELECT scale FROM bench_pages_seed LIMIT 1")
        row = cursor.fetchone()
    if row is None:
        return None
    return row[0] if isinstance(row[0], dict) else json.loads(row[0])


def mark_seeded(scale: dict) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM bench_pages_seed")
        cursor.execute("INSERT INTO bench_pages_seed (scale) VALUES (%s)", [json.dumps(scale)])


def reset_database() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
