"""manage.py import_trajectories: the real files of every format, attached to a task."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from curation.models import Evaluation, Trajectory
from tests.curation import trajectory_fixtures as fx
from tests.curation.tasks_fixtures import hand_made_task
from tests.factories import TaskFactory
from workers.models import Job
from workers.services import job_execute

pytestmark = pytest.mark.django_db

REAL_FILES = [
    "swe-agent/test-repo-i1.traj",
    "swe-agent/function_calling_simple.traj",
    "openhands/events-basic.json",
    "openhands/eval-output-one.jsonl",
    "swe-bench/predictions-example.json",
]


def _call(*args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("import_trajectories", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_it_imports_a_file_onto_a_task_and_says_what_it_did(dataset):
    task = TaskFactory(dataset=dataset)
    path = str(fx.REAL_FORMATS / "swe-agent/test-repo-i1.traj")
    out, err = _call(path, "--task", task.instance_id, "--model", "gpt-4-classic")
    assert err == ""
    trajectory = Trajectory.objects.get()
    assert f"file: created trajectory {trajectory.pk}: gpt-4-classic on {task.instance_id}" in out
    assert out.rstrip().endswith(
        "1 created (12 steps), 0 already imported, 0 errors; evaluations queued"
    )
    out, _ = _call(path, "--task", str(task.pk), "--model", "gpt-4-classic")
    assert f"file: already imported as trajectory {trajectory.pk}" in out


def test_it_reports_bad_lines_and_keeps_the_good_ones(dataset):
    for instance_id in ("a__a-1", "a__a-9"):
        TaskFactory(dataset=dataset, instance_id=instance_id)
    path = str(fx.REAL_FORMATS.parent / "variants/predictions/mixed-good-and-bad.jsonl")
    out, err = _call(path, "--dataset", "core", "--no-evaluate")
    assert "2 created" in out and "7 errors" in out
    assert "line 5: missing required field 'model_patch'" in err
    assert Job.objects.count() == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--task", "999"], "no task '999'"),
        (["--dataset", "nope"], "no dataset 'nope'"),
        (["--task", "{task}", "--format", "predictions"], "nothing was imported"),
    ],
)
def test_it_fails_clearly(dataset, args, message):
    task = TaskFactory(dataset=dataset)
    path = str(fx.REAL_FORMATS / "openhands/events-basic.json")
    with pytest.raises(CommandError, match=message):
        _call(path, *[a.format(task=task.pk) for a in args])


def test_an_unreadable_or_unknown_file_is_a_command_error(dataset, tmp_path):
    task = TaskFactory(dataset=dataset)
    with pytest.raises(CommandError, match="cannot read"):
        _call(str(tmp_path / "missing.jsonl"), "--task", str(task.pk))
    unknown = str(fx.REAL_FORMATS.parent / "variants/unknown/package-lock.json")
    with pytest.raises(CommandError, match="cannot tell the format"):
        _call(unknown, "--task", str(task.pk))


def test_task_or_dataset_is_required(dataset):
    with pytest.raises(CommandError, match="one of the arguments --task --dataset is required"):
        _call(str(fx.REAL_FORMATS / "openhands/events-basic.json"))


@pytest.mark.slow
def test_the_real_files_evaluate_to_patch_did_not_apply_not_a_crash(
    repo_storage, sandbox_root, dataset
):
    task = hand_made_task("marktext_toc", dataset=dataset)
    for relative in REAL_FILES:
        _call(str(fx.REAL_FORMATS / relative), "--task", str(task.pk), "--model", "by-hand")
    assert Trajectory.objects.count() == 1 + 1 + 1 + 1 + 30
    for job in Job.objects.filter(kind="evaluate_trajectory", status="queued"):
        assert job_execute(job_id=job.pk) == "succeeded", Job.objects.get(pk=job.pk).error
    evaluations = Evaluation.objects.select_related("trajectory")
    assert evaluations.count() == 34
    with_patch = [e for e in evaluations if e.trajectory.final_patch.strip()]
    assert len(with_patch) == 2 + 26  # test-repo-i1, eval-output-one, 26 non-empty predictions
    applied = [e for e in with_patch if e.patch_applied]
    # One prediction (matplotlib-25311) only creates files (a .diff, a .orig and a .rej the
    # agent left behind): it applies anywhere, and solves nothing here.
    assert [e.trajectory.metadata["instance_id"] for e in applied] == [
        "matplotlib__matplotlib-25311"
    ]
    assert applied[0].resolved == "none" and applied[0].test_outcomes
    for evaluation in with_patch:
        if evaluation in applied:
            continue
        assert evaluation.patch_applied is False, evaluation.trajectory.model_name
        assert evaluation.patch_error.startswith("the final patch does not apply")
        assert evaluation.resolved == "none"
        assert evaluation.test_outcomes == {}
        assert not evaluation.spec_results.filter(satisfied=True).exists()
    # The files that recorded no patch are evaluated as the empty patch they are.
    for evaluation in evaluations:
        if not evaluation.trajectory.final_patch.strip():
            assert evaluation.patch_applied is True and evaluation.resolved == "none"
    ponyc = evaluations.get(trajectory__source_format="openhands-eval")
    assert "src/libponyc/ast/parser.c: does not exist in index" in ponyc.patch_error
    jobs = Job.objects.filter(kind="evaluate_trajectory")
    assert {job.result["message"][:25] for job in jobs if job.result["patch_applied"] is False} == {
        "patch did not apply: the "
    }


def test_the_model_given_overrides_the_one_the_file_names(dataset):
    task = TaskFactory(dataset=dataset)
    path = str(fx.REAL_FORMATS.parent / "variants/swe-agent/v1-replay-config.traj")
    _call(path, "--task", task.instance_id, "--model", "my-finetune", "--no-evaluate")
    assert Trajectory.objects.get().model_name == "my-finetune"


def test_the_same_file_under_another_model_is_another_trajectory(dataset):
    task = TaskFactory(dataset=dataset)
    path = str(fx.REAL_FORMATS / "swe-agent/test-repo-i1.traj")
    _call(path, "--task", task.instance_id, "--model", "model-a", "--no-evaluate")
    out, _ = _call(path, "--task", task.instance_id, "--model", "model-b", "--no-evaluate")
    assert "1 created" in out and "0 already imported" in out
    out, _ = _call(path, "--task", task.instance_id, "--model", "model-b", "--no-evaluate")
    assert "0 created" in out and "1 already imported" in out
    assert sorted(Trajectory.objects.values_list("model_name", flat=True)) == [
        "model-a",
        "model-b",
    ]
    assert len(set(Trajectory.objects.values_list("content_sha256", flat=True))) == 1


def test_it_lists_the_first_errors_and_counts_the_rest(dataset, tmp_path):
    TaskFactory(dataset=dataset)
    path = tmp_path / "junk.jsonl"
    path.write_text("".join(f'{{"junk": {n}}}\n' for n in range(250)))
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command(
            "import_trajectories",
            str(path),
            "--dataset",
            "core",
            "--format",
            "specloom",
            stdout=StringIO(),
            stderr=(err := StringIO()),
        )
    lines = err.getvalue().splitlines()
    assert len(lines) == 101
    assert lines[-1] == "... and 150 more errors"
