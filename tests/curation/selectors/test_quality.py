"""The quality report: over a run's, a dataset's and a release's tasks; never counting an
unverified spec; in the API, the dataset admin and the release datasheet."""

from __future__ import annotations

import pytest

from curation.exports.records import task_records
from curation.models import Task, TestCase
from curation.selectors.quality import quality_report
from curation.selectors.releases import RecordStats
from tests.curation.release_helpers import cut, reviewed_task
from tests.factories import DatasetFactory, SpecificationFactory, TestCaseFactory

pytestmark = pytest.mark.django_db


def verified_task(dataset, *, tested: int, untested: int, f2p: int, linked: int, **fields):
    task = reviewed_task(dataset=dataset)
    task.specs.all().delete()
    task.tests.all().delete()
    task.validation = {"verified": True}
    for name, value in fields.items():
        setattr(task, name, value)
    task.save()
    specs = [
        SpecificationFactory(task=task, key=f"S{i + 1}", verified=i < tested, order=i)
        for i in range(tested + untested)
    ]
    for number in range(f2p):
        test = TestCaseFactory(
            task=task,
            nodeid=f"tests/t.py::test_{number}",
            role=TestCase.Role.FAIL_TO_PASS,
            needs_parts=["a", "b"] if number == 0 and fields.get("interaction_score") else ["a"],
        )
        if number < linked:
            test.specs.set(specs[:tested])
    return task


def test_it_reports_the_figures_of_the_verified_tasks_and_never_counts_unverified_specs(dataset):
    verified_task(dataset, tested=6, untested=2, f2p=4, linked=4, interaction_score=0.5)
    verified_task(dataset, tested=4, untested=0, f2p=10, linked=6, interaction_score=0.0)
    verified_task(
        dataset,
        tested=5,
        untested=1,
        f2p=3,
        linked=3,
        interaction_score=1.0,
        trivial=True,
        metadata={"synthesis": {"examples": {"f": ["docs: README.md"], "g": []}}},
    )
    draft = reviewed_task(dataset=dataset, status=Task.Status.DRAFT)
    draft.validation = {"verified": False}
    draft.save()
    report = quality_report(tasks=dataset.tasks.all())
    assert report["tasks"] == 4 and report["tasks_measured"] == 3
    assert report["median_tested_specs_per_task"] == 5
    assert report["tested_specs_per_task"]["max"] == 6
    assert report["unverified_specs_not_counted"] == 3
    assert report["median_f2p_tests_per_task"] == 4
    assert report["f2p_linked_share"] == round(13 / 17, 4)
    assert report["median_interaction_score"] == 0.5
    assert report["tasks_without_interaction_test"] == 1  # the one whose tests need one part
    assert report["trivial_share"] == round(1 / 3, 4)
    assert (report["functions_to_implement"], report["example_coverage"]) == (2, 0.5)


def test_release_counts_and_exports_leave_unverified_specs_out(dataset):
    task = reviewed_task(dataset=dataset)
    SpecificationFactory(task=task, key="S3", verified=False, order=2)
    record = next(task_records(Task.objects.filter(pk=task.pk)))
    assert [(s["key"], s["verified"]) for s in record["specs"]] == [
        ("S1", True),
        ("S2", True),
        ("S3", False),
    ]
    stats = RecordStats()
    stats.add(record)
    figures = stats.as_dict()
    assert figures["specs"] == 2
    assert figures["specs_unverified_not_counted"] == 1
    assert sum(figures["by_spec_kind"].values()) == 2


def test_the_datasheet_has_the_quality_report_and_leaves_trivial_tasks_out(repo_storage):
    dataset = DatasetFactory(name="quality")
    kept = reviewed_task(dataset=dataset)
    kept.validation = {"verified": True}
    kept.save()
    trivial = reviewed_task(dataset=dataset)
    Task.objects.filter(pk=trivial.pk).update(trivial=True)
    included = reviewed_task(dataset=dataset)
    Task.objects.filter(pk=included.pk).update(trivial=True, trivial_included=True)
    release = cut(dataset)
    released = {entry["instance_id"] for entry in release.manifest}
    assert released == {kept.instance_id, included.instance_id}
    quality = release.datasheet["quality"]
    assert quality["tasks"] == 2 and quality["trivial_share"] == 0.5
