"""Five attempts at a validated ledger task, evaluated in the real sandbox and audited.

The attempts carry the reference patch, an empty patch, a partial patch (the functional part
without the ValueError contract), a tampering patch and a literal-special-casing patch; every
heuristic finding on the task must come from one of them.
"""

import pytest

from curation.models import Evaluation, Finding, Task, TestCase, Trajectory
from curation.selectors.evaluations import pass_rates_by_kind, spec_matrix
from curation.services.audit import AUDIT_KIND
from curation.services.evaluation import EVALUATE_KIND, trajectory_evaluation_enqueue
from curation.services.trajectories import trajectories_import_file
from curation.services.validation import task_validation_enqueue
from tests.curation import trajectory_fixtures as fx
from tests.curation.tasks_fixtures import hand_made_task
from workers.models import Job
from workers.services import job_execute

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

F2P = "tests/test_allocation_spec.py::"
ZERO = f"{F2P}test_allocation_rejects_a_quantity_that_is_not_positive[zero [0]]"
NEGATIVE = f"{F2P}test_allocation_rejects_a_quantity_that_is_not_positive[n\\xe9gatif \\u22121]"
FULLEST = f"{F2P}test_allocation_takes_the_fullest_location_first"
SHORT = f"{F2P}test_allocation_when_short_raises_and_reserves_nothing"
# A test that passes on the base, added to the task as FAIL_TO_PASS after it was validated.
WEAK = "tests/test_reservations.py::TestReserve::test_it_holds_stock_without_issuing_it"


def _run_queued(kind: str) -> list[Job]:
    jobs = list(Job.objects.filter(kind=kind, status=Job.Status.QUEUED).order_by("id"))
    for job in jobs:
        assert job_execute(job_id=job.pk) == "succeeded", Job.objects.get(pk=job.pk).error
    return [Job.objects.get(pk=job.pk) for job in jobs]


@pytest.fixture
def ledger_task(repo_storage, sandbox_root, dataset):
    task = hand_made_task("ledger_allocation", dataset=dataset)
    # Six runs a side keep the deliberately flaky test out of both lists (see test_validation).
    job = task_validation_enqueue(task=task, reruns=6)
    assert job_execute(job_id=job.pk) == "succeeded", Job.objects.get(pk=job.pk).error
    task.refresh_from_db()
    assert task.status == Task.Status.NEEDS_REVIEW
    return task


def test_it_evaluates_five_attempts_and_every_finding_comes_from_one(ledger_task, tmp_path):
    task = ledger_task
    weak = TestCase.objects.create(task=task, nodeid=WEAK, intended_role="FAIL_TO_PASS")
    weak.specs.set([task.specs.get(key="S1")])
    records = fx.ledger_records(task)
    path = fx.write_jsonl(tmp_path / "attempts.jsonl", records.values())

    report = trajectories_import_file(path=path, dataset=task.dataset)
    assert report.errors == [] and len(report.created) == 5
    by_model = {t.model_name: t for t in Trajectory.objects.filter(task=task)}

    evaluations = _run_queued(EVALUATE_KIND)
    assert len(evaluations) == 5
    results = {e.trajectory.model_name: e for e in Evaluation.objects.select_related("trajectory")}
    reference = results[fx.REFERENCE_MODEL]
    assert (reference.resolved, reference.patch_applied) == ("full", True)
    assert set(reference.test_outcomes.values()) == {"passed"}

    empty = results[fx.EMPTY_MODEL]
    assert empty.resolved == "partial"  # only thanks to the weak test
    assert empty.test_outcomes[WEAK] == "passed"
    assert empty.test_outcomes[FULLEST] == "failed"

    partial = results[fx.PARTIAL_MODEL]
    assert partial.resolved == "partial"
    assert partial.test_outcomes[FULLEST] == partial.test_outcomes[SHORT] == "passed"
    assert partial.test_outcomes[ZERO] == partial.test_outcomes[NEGATIVE] == "failed"
    assert {r.spec.key: r.satisfied for r in partial.spec_results.select_related("spec")} == {
        "S1": True,
        "S2": True,
        "S3": False,
        "S4": True,
    }

    tampering = results[fx.TAMPERING_MODEL]
    assert tampering.touched_test_files == ["conftest.py"]
    assert tampering.resolved == "full"  # the conftest turned every failure into a pass

    special = results[fx.SPECIAL_CASED_MODEL]
    assert special.test_outcomes[FULLEST] == "passed"
    assert special.test_outcomes[SHORT] == "failed"

    # The matrix: a model that passes the functional specs and fails an error-handling one.
    matrix = spec_matrix(task=task)
    assert matrix.cell(fx.PARTIAL_MODEL, "S1").rate == 1.0
    assert matrix.cell(fx.PARTIAL_MODEL, "S3").rate == 0.0
    rates = {(row["model"], row["kind"]): row["rate"] for row in pass_rates_by_kind(task=task)}
    assert rates[(fx.PARTIAL_MODEL, "functional")] == 1.0
    assert rates[(fx.PARTIAL_MODEL, "error-handling")] == 0.5  # S2 yes, S3 no

    # Each evaluation queued an audit; they coalesce into one waiting job.
    audits = _run_queued(AUDIT_KIND)
    assert len(audits) == 1
    findings = list(task.findings.filter(source="heuristic"))
    kinds = {(f.kind, f.trajectory.model_name if f.trajectory else None) for f in findings}
    assert ("weak_test", fx.EMPTY_MODEL) in kinds
    assert ("tampering", fx.TAMPERING_MODEL) in kinds
    assert ("special_cased_literal", fx.SPECIAL_CASED_MODEL) in kinds
    assert ("unsafe_action", fx.TAMPERING_MODEL) in kinds
    all_fail = [f for f in findings if f.kind == "all_models_fail_one_test"]
    assert {f.evidence["test"] for f in all_fail} == {ZERO, NEGATIVE}
    assert all(
        set(f.evidence["models"]) == {fx.PARTIAL_MODEL, fx.SPECIAL_CASED_MODEL} for f in all_fail
    )
    # Every finding about a trajectory names one of the five; task-level ones cite them.
    five = {t.pk for t in by_model.values()}
    for finding in findings:
        cited = (
            {finding.trajectory_id}
            if finding.trajectory_id
            else set(finding.evidence.get("trajectories", []))
        )
        assert cited and cited <= five, (finding.kind, finding.message)
    assert {f.kind for f in findings} == {
        "weak_test",
        "tampering",
        "special_cased_literal",
        "unsafe_action",
        "all_models_fail_one_test",
    }
    assert not any(f.trajectory_id == by_model[fx.REFERENCE_MODEL].pk for f in findings)
    assert not any(f.trajectory_id == by_model[fx.PARTIAL_MODEL].pk for f in findings)

    unsafe = set(Trajectory.objects.filter(task=task, unsafe=True).values_list("pk", flat=True))
    assert unsafe == {by_model[fx.TAMPERING_MODEL].pk}
    literal = next(f for f in findings if f.kind == "special_cased_literal")
    assert "'PNT-200'" in literal.evidence["literals"]
    assert literal.evidence["links"]["trajectory"].endswith(
        f"/trajectories/{by_model[fx.SPECIAL_CASED_MODEL].pk}"
    )

    # Evaluating again replaces the result instead of adding one.
    trajectory_evaluation_enqueue(trajectory=by_model[fx.PARTIAL_MODEL])
    _run_queued(EVALUATE_KIND)
    assert Evaluation.objects.filter(trajectory=by_model[fx.PARTIAL_MODEL]).count() == 1
    assert partial.spec_results.count() == 4


def test_a_dismissed_finding_stays_dismissed_after_the_next_audit(ledger_task, tmp_path):
    task = ledger_task
    records = fx.ledger_records(task)
    path = fx.write_jsonl(tmp_path / "one.jsonl", [records["tampering"]])
    trajectories_import_file(path=path, task=task)
    _run_queued(EVALUATE_KIND)
    _run_queued(AUDIT_KIND)
    finding = task.findings.get(kind=Finding.Kind.TAMPERING)
    finding.dismissed = True
    finding.save()

    from curation.services.audit import task_audit_enqueue

    task_audit_enqueue(task=task)
    _run_queued(AUDIT_KIND)
    again = task.findings.get(kind=Finding.Kind.TAMPERING, superseded=False)
    assert again.pk != finding.pk
    assert again.dismissed is True
    finding.refresh_from_db()
    assert finding.superseded  # the earlier set is kept as history
