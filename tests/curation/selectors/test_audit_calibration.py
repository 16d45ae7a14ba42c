"""Calibration from the database: each decision meets the findings of the revision it decided,
as they stood when it was made; blind and informed decisions apart; the LLM row's own subset;
dismissed findings apart; adjudications left out."""

from __future__ import annotations

import pytest

from curation.models import Finding, Task
from curation.selectors.audit import audit_calibration, current_findings
from curation.services.audit import audit_record
from tests.curation.release_helpers import review
from tests.factories import TaskFactory, UserFactory
from workers.audit.facts import AuditResult, FindingDraft
from workers.audit.llm import LLMAudit

pytestmark = pytest.mark.django_db


def _draft(key: str = "untested:S1") -> FindingDraft:
    return FindingDraft(kind="untested_spec", severity="high", message="S1 has no test", key=key)


def record(task: Task, *, flag: bool, llm: str | None = None, llm_flag: bool = False) -> int:
    """One audit of the task as it is now: a high finding or none; an LLM part that succeeded
    (with or without a finding) or failed. Returns the audit's id."""
    llm_audit = None
    if llm is not None:
        llm_audit = LLMAudit(status=llm, model="judge-1", verdict="approve")
        if llm_flag:
            llm_audit.findings = [_draft("llm:S1")]
    counts = audit_record(
        task=Task.objects.get(pk=task.pk),
        result=AuditResult(findings=[_draft()] if flag else [], unsafe=set()),
        llm=llm_audit,
        job=None,
    )
    return counts["audit"]


def _reviewers(n: int):
    return [UserFactory(username=f"reviewer{i}", roles=["reviewer"]) for i in range(n)]


def _agent(report, group="all", row="review_agent"):
    return report["groups"][group]["rows"][row]


def _cells(row) -> tuple:
    return tuple(
        row[k] for k in ("true_positive", "false_positive", "false_negative", "true_negative")
    )


def test_it_compares_each_decision_with_the_findings_of_its_revision_when_it_was_made(dataset):
    ann, ben, cat = _reviewers(3)
    task = TaskFactory(dataset=dataset)
    first = record(task, flag=True)  # r1: "S1 has no test"
    review(task, ann, "reject")  # sees the flag: a true positive
    second = record(task, flag=False)  # r1 audited again: nothing found this time
    review(task, ben, "approve")  # compared with the second set: a true negative
    report = audit_calibration(dataset=dataset)
    # ann's decision still meets the set that existed when she decided, not today's.
    assert _cells(_agent(report)) == (1, 0, 0, 1)
    # Nothing was deleted: both sets are kept, the first superseded.
    assert Finding.objects.get(audit_id=first).superseded
    assert not Finding.objects.filter(audit_id=second).exists()  # the clean audit found nothing

    Task.objects.filter(pk=task.pk).update(revision=2)  # an edit
    task.refresh_from_db()
    review(task, cat, "reject")  # r2 has no audit yet: this decision is not compared
    record(task, flag=True)  # r2's audit comes after cat decided: still not compared
    report = audit_calibration(dataset=dataset)
    assert report["decisions"] == {"total": 3, "blind": 0, "informed": 3, "compared": 2}
    assert _cells(_agent(report)) == (1, 0, 0, 1)
    assert (report["decided_tasks"], report["audited_tasks"]) == (1, 1)
    # Reviewers see the latest set, made on r2.
    assert [(f.kind, f.task_revision) for f in current_findings(task=task)] == [
        ("untested_spec", 2)
    ]


def test_it_reports_blind_decisions_apart_from_informed_ones(dataset):
    ann, ben = _reviewers(2)
    flagged = TaskFactory(dataset=dataset)
    clean = TaskFactory(dataset=dataset)
    record(flagged, flag=True)
    record(clean, flag=False)
    review(flagged, ann, "reject", blind=True)  # blind: tp
    review(clean, ann, "reject", blind=True)  # blind: fn
    review(flagged, ben, "approve")  # informed: fp
    review(clean, ben, "approve")  # informed: tn
    report = audit_calibration(dataset=dataset)
    assert report["decisions"] == {"total": 4, "blind": 2, "informed": 2, "compared": 4}
    assert _cells(_agent(report, "blind")) == (1, 0, 1, 0)
    assert _cells(_agent(report, "informed")) == (0, 1, 0, 1)
    assert _cells(_agent(report, "all")) == (1, 1, 1, 1)
    assert report["groups"]["blind"]["label"] == "Blind decisions"
    assert "anchor" in report["groups"]["informed"]["description"]
    # Decisions on one task stay together when resampled: 4 decisions, 2 tasks.
    assert (_agent(report)["n"], _agent(report)["tasks"]) == (4, 2)


def test_the_llm_row_has_its_own_subset_and_the_last_successful_llm_set(dataset):
    ann, ben, cat = _reviewers(3)
    task = TaskFactory(dataset=dataset)
    unaudited_by_llm = TaskFactory(dataset=dataset)
    record(unaudited_by_llm, flag=False)
    review(unaudited_by_llm, cat, "approve")
    record(task, flag=False, llm="ok", llm_flag=True)
    review(task, ann, "reject")
    record(task, flag=False, llm="failed")  # the LLM set of the first audit stays in force
    review(task, ben, "reject")
    report = audit_calibration(dataset=dataset)
    llm = _agent(report, row="llm")
    assert (llm["n"], llm["tasks"], llm["prevalence"]) == (2, 1, 1.0)
    assert _cells(llm) == (2, 0, 0, 0)
    assert _cells(_agent(report, row="heuristic")) == (0, 0, 2, 1)
    # The review agent: heuristic or LLM, over everything audited.
    assert _cells(_agent(report)) == (2, 0, 0, 1)
    # Each row has its own baselines, on its own subset.
    assert llm["baselines"]["always_flag"]["accuracy"] == 1.0
    assert _agent(report)["baselines"]["always_flag"]["accuracy"] == round(2 / 3, 4)


def test_dismissed_findings_are_not_flags_and_are_reported_apart(dataset):
    (ann,) = _reviewers(1)
    task = TaskFactory(dataset=dataset)
    audit = record(task, flag=True)
    Finding.objects.filter(audit_id=audit).update(dismissed=True)
    review(task, ann, "approve")
    row = _agent(audit_calibration(dataset=dataset))
    assert _cells(row) == (0, 0, 0, 1)
    assert row["dismissed"] == {"findings": 1, "decisions": 1}


def test_adjudications_are_not_decisions_here(dataset, bob):
    task = TaskFactory(dataset=dataset)
    record(task, flag=True)
    review(task, bob, "reject", is_adjudication=True)
    report = audit_calibration(dataset=dataset)
    assert report["decisions"]["total"] == 0
    assert _agent(report)["verdict"] == "not_enough_decisions"
    assert "adjudications are left out" in report["method"]["unit"]
