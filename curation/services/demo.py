"""Demo data that shows every feature: agent trajectories from three models on the demo's tasks.

The tasks only exist once the demo's synthesis jobs have run, so this is a job (`demo_seed`)
queued behind them: it waits for them, writes one trajectory file per model in a real format
(SWE-bench predictions, SWE-agent .traj, OpenHands evaluation output), imports the files
through the same importer a curator uses (which queues the real evaluation jobs), then queues
the seeded reviews (`demo_reviews`, a job of the review app, found by its kind).

The "agents" are made up, their patches are not: the gold model submits the reference
solution, the second leaves out its last changed function, the third restores only that one.
On tightly coupled tasks both halves fail every FAIL_TO_PASS test, which is the point.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.conf import settings

from curation.models import Dataset, Task
from curation.services.repository_sources import private_folder
from curation.services.trajectories import trajectories_import_file
from curation.services.validation import reference_parts_for
from workers.models import Job
from workers.services import JobFailed, job_enqueue

MODELS = {
    "gold": "demo/gpt-4.1-gold",
    "partial": "demo/qwen3-coder-30b",
    "weak": "demo/llama-3.3-70b",
}
WAIT_SECONDS = 4 * 3600
POLL_SECONDS = 2.0


def demo_folder() -> Path:
    return private_folder(Path(settings.STORAGE_ROOT) / "demo" / "trajectories")


def _without_one_part(task: Task) -> str:
    """The reference with its last changed function left out (empty with a single part)."""
    parts = reference_parts_for(task)
    return parts[-1].complement if len(parts) > 1 else ""


def _last_part_only(task: Task) -> str:
    """Only the last changed function restored (what the second model leaves out)."""
    parts = reference_parts_for(task)
    return parts[-1].patch if len(parts) > 1 else ""


def _predictions(tasks: list[Task], folder: Path) -> Path:
    """SWE-bench predictions, JSONL: instance_id, model_name_or_path, model_patch."""
    path = folder / "gold-predictions.jsonl"
    lines = [
        json.dumps(
            {
                "instance_id": task.instance_id,
                "model_name_or_path": MODELS["gold"],
                "model_patch": task.reference_patch,
            }
        )
        for task in tasks
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _swe_agent_traj(task: Task, patch: str) -> dict[str, Any]:
    """A SWE-agent 1.x .traj: steps, chat history, info with the submission, replay config."""
    first_file = next(
        (line[6:] for line in patch.splitlines() if line.startswith("+++ b/")), "the module"
    )
    steps = [
        (
            "I should find where the missing behaviour belongs.",
            f"find_file {Path(first_file).name}",
            f"Found 1 matches in /repo:\n/repo/{first_file}",
        ),
        ("Let me read the file.", f"open {first_file}", f"[File: /repo/{first_file}]\n..."),
        (
            "I will implement the functions the issue describes, one at a time.",
            f"edit {first_file}",
            "File updated.",
        ),
        ("The change looks complete; submitting.", "submit", patch or "(no changes)"),
    ]
    return {
        "environment": "swe_main",
        "trajectory": [
            {
                "thought": thought,
                "action": action,
                "observation": observation,
                "response": f"{thought}\n\n```\n{action}\n```",
                "state": json.dumps({"open_file": first_file, "working_dir": "/repo"}),
                "execution_time": 0.4,
            }
            for thought, action, observation in steps
        ],
        "history": [
            {"role": "system", "content": "You are an autonomous programmer.", "agent": "main"},
            {"role": "user", "content": task.problem_statement, "agent": "main"},
        ],
        "info": {
            "exit_status": "submitted",
            "submission": patch,
            "model_stats": {
                "instance_cost": 0.12,
                "tokens_sent": 18_000 + len(task.problem_statement),
                "tokens_received": 900,
                "api_calls": len(steps),
            },
        },
        "replay_config": json.dumps(
            {
                "agent": {"model": {"name": MODELS["partial"]}},
                "problem_statement": {"id": task.instance_id},
            }
        ),
    }


def _openhands_output(tasks: list[Task], folder: Path) -> Path:
    """OpenHands evaluation output.jsonl: one line per instance, events as history."""
    path = folder / "openhands-output.jsonl"
    lines = []
    for task in tasks:
        patch = _last_part_only(task)
        history = [
            {"id": 0, "source": "user", "action": "message",
             "message": task.problem_statement[:2000], "args": {"content": task.problem_statement}},
            {"id": 1, "source": "agent", "action": "run", "message": "Running command: ls",
             "args": {"command": "ls", "thought": "Look at the repository first."}},
            {"id": 2, "source": "environment", "observation": "run", "cause": 1,
             "content": "README.md\nsrc\ntests", "extras": {"command": "ls", "exit_code": 0}},
            {"id": 3, "source": "agent", "action": "finish", "message": "Done.",
             "args": {"thought": "I implemented the function the issue names; that should do."}},
        ]  # fmt: skip
        lines.append(
            json.dumps(
                {
                    "instance_id": task.instance_id,
                    "instruction": task.problem_statement,
                    "metadata": {
                        "agent_class": "CodeActAgent",
                        "llm_config": {"model": MODELS["weak"], "temperature": 0.0},
                    },
                    "history": history,
                    "metrics": {"accumulated_cost": 0.03},
                    "test_result": {"git_patch": patch},
                    "error": None,
                }
            )
        )
    path.write_text("\n".join(lines) + "\n")
    return path


def demo_trajectory_files(*, tasks: list[Task], folder: Path) -> list[Path]:
    """One file per model and format (SWE-agent writes one .traj per instance)."""
    files = [_predictions(tasks, folder)]
    swe_agent = folder / "swe-agent"
    swe_agent.mkdir(exist_ok=True)
    for task in tasks:
        path = swe_agent / f"{task.instance_id}.traj"
        path.write_text(json.dumps(_swe_agent_traj(task, _without_one_part(task)), indent=1))
        files.append(path)
    files.append(_openhands_output(tasks, folder))
    return files


def _wait_for(job_ids: list[int], ctx) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        waiting = list(
            Job.objects.filter(pk__in=job_ids)
            .exclude(status__in=Job.FINISHED)
            .values_list("pk", flat=True)
        )
        if not waiting:
            return
        if time.monotonic() > deadline:
            raise JobFailed(f"synthesis jobs {waiting} did not finish within {WAIT_SECONDS} s")
        ctx.progress(5, f"waiting for synthesis job(s) {', '.join(map(str, waiting))}")
        time.sleep(POLL_SECONDS)


def demo_seed_run(*, job: Job, ctx) -> dict[str, Any]:
    dataset = Dataset.objects.get(pk=job.params["dataset_id"])
    _wait_for(job.params.get("after", []), ctx)
    tasks = list(
        dataset.tasks.filter(validation__verified=True)
        .exclude(status=Task.Status.DRAFT)
        .select_related("repository")
        .order_by("id")
    )
    if not tasks:
        raise JobFailed(
            f"dataset {dataset.name} has no verified task yet (the synthesis jobs made none); "
            "nothing to seed"
        )
    ctx.progress(40, f"writing trajectories of {len(MODELS)} models on {len(tasks)} tasks")
    files = demo_trajectory_files(tasks=tasks, folder=demo_folder())
    created = duplicates = errors = 0
    for index, path in enumerate(files):
        report = trajectories_import_file(path=path, dataset=dataset, evaluate=True)
        created += len(report.created)
        duplicates += len(report.duplicates)
        errors += len(report.errors)
        for error in report.errors:
            ctx.log(f"{path.name} line {error['line']}: {error['message']}")
        ctx.progress(40 + int(50 * (index + 1) / len(files)), f"imported {path.name}")
    reviews = job_enqueue(
        kind="demo_reviews",
        target=dataset,
        params={"dataset_id": dataset.pk, "reviewers": job.params.get("reviewers", [])},
        message="seed reviews of the demo dataset",
    )
    return {
        "message": (
            f"{created} trajectories imported ({duplicates} already there, {errors} refused) "
            f"from {len(MODELS)} models on {len(tasks)} tasks; evaluations queued; "
            f"reviews in job {reviews.pk}"
        ),
        "files": [str(path.relative_to(settings.STORAGE_ROOT)) for path in files],
        "trajectories": created,
    }
