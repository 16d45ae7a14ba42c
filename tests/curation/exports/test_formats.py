"""The bytes of the export formats."""

import json

import pytest

from curation.exports.formats import specloom_line, swebench_line
from curation.exports.records import ExportOptions, _iso_text, content_sha256, task_records
from curation.models import Task
from tests.curation.release_helpers import ODD_NODEID, evaluated_trajectory, reviewed_task

pytestmark = pytest.mark.django_db


def test_a_specloom_line_is_the_record_itself(dataset):
    task = reviewed_task(dataset=dataset)
    evaluated_trajectory(task, model="m", resolved="full")
    for options in (ExportOptions(), ExportOptions(trajectories=True)):
        (record,) = task_records(Task.objects.filter(pk=task.pk), options=options)
        line = specloom_line(record)
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        assert json.loads(line) == json.loads(json.dumps(record))
        assert json.loads(line)["content_sha256"] == content_sha256(record)
    assert json.loads(line)["trajectories"][0]["model_name"] == "m"


def test_a_plain_dict_is_written_as_it_is():
    assert specloom_line({"b": 1, "a": "é"}) == '{"b":1,"a":"é"}\n'.encode()


def test_swebench_lines_encode_the_test_lists_as_json_strings(dataset):
    task = reviewed_task(dataset=dataset)
    (record,) = task_records(Task.objects.filter(pk=task.pk))
    row = json.loads(swebench_line(record))
    assert json.loads(row["FAIL_TO_PASS"]) == [ODD_NODEID]
    assert row["environment_setup_commit"] == task.repository.default_commit


@pytest.mark.parametrize(
    ("stored", "iso"),
    [
        ("2026-01-02 03:04:05.6+00", "2026-01-02T03:04:05.600000+00:00"),
        ("2026-01-02 03:04:05+00", "2026-01-02T03:04:05+00:00"),
        ("2026-01-02 03:04:05.600000", "2026-01-02T03:04:05.600000+00:00"),
        ("2026-01-02 03:04:05.000000", "2026-01-02T03:04:05+00:00"),
        ("2026-01-02 03:04:05+0530", "2026-01-02T03:04:05+05:30"),
        ("2026-01-02 03:04:05-05:30", "2026-01-02T03:04:05-05:30"),
        ("yesterday", "yesterday"),
        (None, None),
    ],
)
def test_timestamps_become_iso_8601(stored, iso):
    assert _iso_text(stored) == iso


def test_the_created_at_of_a_record_is_pythons_isoformat_in_utc(dataset):
    from datetime import UTC

    for microsecond in (0, 120000, 123456):
        task = reviewed_task(dataset=dataset)
        stamp = task.created_at.replace(microsecond=microsecond)
        Task.objects.filter(pk=task.pk).update(created_at=stamp)
        (record,) = task_records(Task.objects.filter(pk=task.pk))
        assert record["created_at"] == stamp.astimezone(UTC).isoformat()


def test_records_follow_any_order_of_the_queryset(dataset):
    tasks = [reviewed_task(dataset=dataset) for _ in range(5)]
    queryset = Task.objects.order_by("-id")
    records = list(task_records(queryset, options=ExportOptions(batch_size=2)))
    assert [r["task_id"] for r in records] == [t.pk for t in reversed(tasks)]
    assert all(r["tests"][0]["nodeid"] == ODD_NODEID for r in records)


def test_a_record_never_names_a_spec_of_another_task_whatever_the_batch(dataset):
    from tests.factories import SpecificationFactory, TestCaseFactory

    first, second = reviewed_task(dataset=dataset), reviewed_task(dataset=dataset)
    stray = SpecificationFactory(task=second, key="S9")
    test = TestCaseFactory(task=first, nodeid="tests/test_x.py::test_linked_astray")
    test.specs.add(stray, first.specs.get(key="S1"))
    tasks = Task.objects.filter(pk__in=[first.pk, second.pk])
    together = {r["instance_id"]: r for r in task_records(tasks)}
    apart = {r["instance_id"]: r for r in task_records(tasks, options=ExportOptions(batch_size=1))}
    linked = next(t for t in together[first.instance_id]["tests"] if t["nodeid"] == test.nodeid)
    assert linked["specs"] == ["S1"]
    # The same record whether the two tasks were read in one batch or in two.
    assert together == apart
