"""Importing trajectories: real files, duplicates, bad records, whole records or nothing."""

import json
from decimal import Decimal

import pytest
from django.db import connection

from curation.models import Trajectory, TrajectoryStep
from curation.services import trajectories as service
from curation.services.trajectories import ImportRefused, trajectories_import_file
from tests.curation import trajectory_fixtures as fx
from tests.factories import DatasetFactory, TaskFactory
from workers.models import Job

pytestmark = pytest.mark.django_db

VARIANTS = fx.REAL_FORMATS.parent / "variants"


@pytest.fixture
def task(dataset):
    return TaskFactory(dataset=dataset)


@pytest.mark.parametrize(
    ("relative", "fmt", "model", "steps", "patch_chars", "cost", "exit_status"),
    [
        (
            "swe-agent/test-repo-i1.traj",
            "swe-agent",
            "named-by-hand",
            12,
            301,
            "0.538390",
            "submitted",
        ),
        ("swe-agent/function_calling_simple.traj", "swe-agent", "named-by-hand", 12, 0, None, ""),
        (
            "openhands/events-basic.json",
            "openhands",
            "claude-3-5-sonnet-20241022",
            4,
            0,
            None,
            "finished",
        ),
        (
            "openhands/eval-output-one.jsonl",
            "openhands-eval",
            "openai/openrouter-llama-4-maverick",
            49,
            342,
            "0.000000",
            "finished",
        ),
    ],
)
def test_it_imports_each_real_file_onto_a_task(
    task, relative, fmt, model, steps, patch_chars, cost, exit_status
):
    # Files that name no model are given one; the others keep their own (a model given would
    # override it: test_the_model_given_overrides_the_one_the_file_names).
    given = model if model == "named-by-hand" else None
    report = trajectories_import_file(path=fx.REAL_FORMATS / relative, task=task, model=given)
    assert report.errors == [] and report.format == fmt
    (created,) = report.created
    trajectory = Trajectory.objects.get(pk=created["id"])
    assert trajectory.model_name == model
    assert trajectory.source_format == fmt
    assert trajectory.step_count == steps == trajectory.steps.count()
    assert len(trajectory.final_patch) == patch_chars
    assert trajectory.cost_usd == (Decimal(cost) if cost else None)
    assert trajectory.exit_status == exit_status
    assert list(trajectory.steps.values_list("index", flat=True)) == list(range(steps))
    job = Job.objects.get(kind="evaluate_trajectory")
    assert job.params == {"trajectory_id": trajectory.pk}


def test_the_real_swe_agent_steps_keep_their_actions_and_observations(task):
    path = fx.REAL_FORMATS / "swe-agent/test-repo-i1.traj"
    source = json.loads(path.read_text())
    report = trajectories_import_file(path=path, task=task, model="m", evaluate=False)
    trajectory = Trajectory.objects.get(pk=report.created[0]["id"])
    actions = list(trajectory.steps.filter(kind="action").values_list("action", "tool"))
    assert [a for a, _ in actions] == [entry["action"] for entry in source["trajectory"]]
    assert [t for _, t in actions] == ["find_file", "open", "edit", "python", "submit"]
    last = trajectory.steps.filter(kind="observation").last()
    assert last.observation == source["trajectory"][-1]["observation"]
    assert (trajectory.tokens_in, trajectory.tokens_out) == (52861, 326)
    assert trajectory.metadata["instance_id"] == "test-repo-i1"  # not the task's: kept
    assert Job.objects.count() == 0


def test_predictions_match_tasks_by_instance_id_within_the_dataset(dataset):
    source = json.loads((fx.REAL_FORMATS / "swe-bench/predictions-example.json").read_text())
    ours = [TaskFactory(dataset=dataset, instance_id=row["instance_id"]) for row in source[:3]]
    # The same instance id in another dataset is not a match.
    TaskFactory(dataset=DatasetFactory(name="other"), instance_id=source[3]["instance_id"])
    report = trajectories_import_file(
        path=fx.REAL_FORMATS / "swe-bench/predictions-example.json", dataset=dataset
    )
    assert [entry["task"] for entry in report.created] == [t.pk for t in ours]
    assert report.located_by == "index"
    assert len(report.errors) == 27
    assert report.errors[0] == {
        "line": 3,
        "message": f"no task with instance id {source[3]['instance_id']!r} in dataset 'core'",
    }
    first = Trajectory.objects.get(pk=report.created[0]["id"])
    assert first.final_patch == source[0]["model_patch"]
    assert (first.model_name, first.step_count) == ("openhands", 0)


def test_reimporting_a_file_creates_no_duplicates(task, tmp_path):
    records = fx.ledger_records(task)
    path = fx.write_jsonl(tmp_path / "attempts.jsonl", records.values())
    first = trajectories_import_file(path=path, task=task)
    again = trajectories_import_file(path=path, task=task)
    assert len(first.created) == 5 and again.created == []
    assert [d["id"] for d in again.duplicates] == first.created_ids
    assert [d["line"] for d in again.duplicates] == [1, 2, 3, 4, 5]
    assert Trajectory.objects.count() == 5
    # Re-serialised with other key order and spacing, a record is still the same record.
    reordered = tmp_path / "reordered.json"
    reordered.write_text(json.dumps(dict(reversed(list(records["partial"].items()))), indent=4))
    assert (
        trajectories_import_file(path=reordered, task=task).duplicates[0]["id"]
        == (first.created[2]["id"])
    )
    assert Job.objects.filter(kind="evaluate_trajectory").count() == 5


def test_a_bad_file_keeps_its_valid_records_and_names_the_lines_of_the_others(dataset):
    for instance_id in ("a__a-1", "a__a-9"):
        TaskFactory(dataset=dataset, instance_id=instance_id)
    report = trajectories_import_file(
        path=VARIANTS / "predictions/mixed-good-and-bad.jsonl", dataset=dataset
    )
    assert [entry["line"] for entry in report.created] == [1, 9]
    messages = {error["line"]: error["message"] for error in report.errors}
    assert list(messages) == [2, 4, 5, 6, 7, 8, 10]
    assert messages[5] == "missing required field 'model_patch'"
    assert "was the file truncated" in messages[10]
    assert Trajectory.objects.count() == 2


def test_a_record_without_a_model_is_an_error_unless_one_is_given(task, tmp_path):
    nameless = fx.record(task, model=None, patch="")
    path = fx.write_jsonl(tmp_path / "nameless.jsonl", [nameless])
    report = trajectories_import_file(path=path, task=task)
    assert report.created == []
    assert report.errors == [
        {
            "line": 1,
            "message": "the record names no model; name it with --model (or ?model= in the API)",
        }
    ]
    report = trajectories_import_file(path=path, task=task, model="given")
    assert Trajectory.objects.get(pk=report.created[0]["id"]).model_name == "given"


def test_records_out_of_range_are_rejected_one_by_one(task, tmp_path):
    expensive = fx.record(task, model="m", patch="", cost_usd=10**9)
    fine = fx.record(task, model="m", patch="", exit_status="done")
    path = fx.write_jsonl(tmp_path / "two.jsonl", [expensive, fine])
    report = trajectories_import_file(path=path, task=task)
    assert [e["line"] for e in report.errors] == [1]
    assert "cost_usd" in report.errors[0]["message"]
    assert [c["line"] for c in report.created] == [2]


def test_text_postgresql_refuses_is_replaced_and_the_record_is_never_half_written(
    task, tmp_path, monkeypatch
):
    # Tool output may hold NUL characters (a binary file printed), which PostgreSQL refuses.
    # With small batches the NUL sits in the third batch of steps, after the trajectory row
    # and two batches were written: all of them must go, then the record is stored whole with
    # the character replaced. SQLite keeps the text as it is.
    monkeypatch.setattr(service, "STEP_BATCH_ROWS", 10)
    steps = [
        {"role": "tool", "kind": "observation", "content": f"line {i}", "observation": f"line {i}"}
        for i in range(30)
    ]
    steps[25]["content"] = steps[25]["observation"] = "ELF\x00\x01 binary"
    record = fx.record(task, model="m", patch="", steps=steps)
    path = fx.write_jsonl(tmp_path / "one.jsonl", [record])
    report = trajectories_import_file(path=path, task=task, evaluate=False)
    assert report.errors == []
    trajectory = Trajectory.objects.get()
    assert trajectory.steps.count() == 30 == TrajectoryStep.objects.count()
    assert trajectory.steps.get(index=24).content == "line 24"
    stored = trajectory.steps.get(index=25).observation
    if connection.vendor == "postgresql":
        assert stored == "ELF\ufffd\x01 binary"
        assert "text_replaced" in trajectory.metadata
    else:
        assert stored == "ELF\x00\x01 binary"
        assert "text_replaced" not in trajectory.metadata


def test_it_refuses_what_it_cannot_read(task, tmp_path):
    with pytest.raises(ImportRefused, match="cannot tell the format"):
        trajectories_import_file(path=VARIANTS / "unknown/package-lock.json", task=task)
    with pytest.raises(ImportRefused, match="unknown format"):
        trajectories_import_file(path=VARIANTS / "unknown/package-lock.json", fmt="csv", task=task)
    with pytest.raises(ImportRefused, match="not both"):
        trajectories_import_file(
            path=VARIANTS / "specloom/records.jsonl", task=task, dataset=task.dataset
        )
    # A named format that does not fit: every record says why.
    report = trajectories_import_file(
        path=VARIANTS / "specloom/records.jsonl", fmt="predictions", task=task
    )
    assert report.created == [] and report.errors


def test_without_a_task_or_dataset_records_match_any_task_the_importer_may_see(tmp_path):
    visible = TaskFactory(instance_id="specloom__x-1")
    hidden = TaskFactory(instance_id="specloom__x-2")
    path = fx.write_jsonl(
        tmp_path / "two.jsonl",
        [fx.record(visible, model="m", patch=""), fx.record(hidden, model="m", patch="")],
    )
    report = service.trajectories_import_file(
        path=path, tasks=type(visible).objects.filter(pk=visible.pk)
    )
    assert [c["task"] for c in report.created] == [visible.pk]
    assert report.errors == [{"line": 2, "message": "no task with instance id 'specloom__x-2'"}]


def test_the_same_record_twice_in_one_file_is_stored_once(task, tmp_path):
    record = fx.record(task, model="m", patch="")
    other = fx.record(task, model="m2", patch="")
    path = fx.write_jsonl(tmp_path / "twice.jsonl", [record, other, record])
    report = trajectories_import_file(path=path, task=task)
    assert [c["line"] for c in report.created] == [1, 2]
    assert report.duplicates == [{"line": 3, "id": report.created[0]["id"], "task": task.pk}]
    assert Job.objects.filter(kind="evaluate_trajectory").count() == 2


def test_one_refused_record_does_not_cost_its_group_the_others(task, tmp_path, monkeypatch):
    # A group is written together; when the database refuses it, each record is written on
    # its own: the good ones are kept, the refused one is cleaned (PostgreSQL) or kept as is.
    monkeypatch.setattr(service, "RECORDS_PER_COMMIT", 3)
    records = [fx.record(task, model=f"m{i}", patch="") for i in range(5)]
    records[1]["steps"][0]["content"] = "NUL \x00 here"
    path = fx.write_jsonl(tmp_path / "five.jsonl", records)
    report = trajectories_import_file(path=path, task=task)
    assert report.errors == [] and [c["line"] for c in report.created] == [1, 2, 3, 4, 5]
    assert Trajectory.objects.count() == 5
    assert TrajectoryStep.objects.count() == 5 * len(records[0]["steps"])
    assert Job.objects.filter(kind="evaluate_trajectory").count() == 5


def test_a_report_keeps_the_first_errors_by_line_and_counts_them_all():
    from curation.services.trajectories import MAX_REPORTED_ERRORS, ImportReport

    report = ImportReport(format="specloom")
    for line in [*range(500, 0, -1), None]:
        report.add_error(line, f"bad {line}")
    assert report.error_count == 501
    assert [e["line"] for e in report.errors] == [None, *range(1, MAX_REPORTED_ERRORS)]
    as_dict = report.as_dict()
    assert as_dict["counts"]["errors"] == 501
    assert as_dict["errors_omitted"] == 501 - MAX_REPORTED_ERRORS


def test_the_model_given_overrides_the_one_the_file_names(task):
    report = trajectories_import_file(
        path=fx.REAL_FORMATS / "openhands/events-basic.json", task=task, model="my-finetune"
    )
    (created,) = report.created
    assert created["model"] == "my-finetune"
    again = trajectories_import_file(
        path=fx.REAL_FORMATS / "openhands/events-basic.json", task=task
    )
    assert again.duplicates == [] and again.created[0]["model"] == "claude-3-5-sonnet-20241022"


def test_an_openhands_resolver_output_imports(task):
    path = fx.REAL_FORMATS.parent / "variants/openhands/resolver-output.jsonl"
    report = trajectories_import_file(path=path, task=task, evaluate=False)
    assert report.format == "openhands-resolver"
    assert [c["model"] for c in report.created] == ["claude-3-5-sonnet-20241022"]
    assert report.created[0]["steps"] == 6
    # The pull-request run names no model at all: the importer has to.
    assert [e["line"] for e in report.errors] == [2]
    assert "names no model" in report.errors[0]["message"]
    named = trajectories_import_file(path=path, task=task, model="resolver-run", evaluate=False)
    assert [c["model"] for c in named.created] == ["resolver-run", "resolver-run"]
    assert Trajectory.objects.get(pk=named.created[0]["id"]).final_patch.startswith("diff --git")
