"""The audit service: each audit a new set of findings pinned to its revision (the previous set
superseded, never deleted), no audit when nothing changed, the LLM auditor over real HTTP,
failures recorded rather than raised, unsafe trajectories flagged (exports leave them out)."""

import pytest

from curation.models import Evaluation, Finding, Task, Trajectory, TrajectoryStep
from curation.services.audit import AUDIT_KIND, task_audit_enqueue
from tests.curation.release_helpers import review
from tests.factories import SpecificationFactory, TaskFactory, TestCaseFactory, TrajectoryFactory
from tests.support.llm_server import Reply, ScriptedLLMServer
from workers.models import Job
from workers.services import job_execute

pytestmark = pytest.mark.django_db


@pytest.fixture
def task(dataset):
    task = TaskFactory(dataset=dataset)
    spec = SpecificationFactory(task=task, key="S1", kind="functional")
    TestCaseFactory(task=task, nodeid="tests/test_a.py::test_a").specs.add(spec)
    return task


@pytest.fixture
def trajectory(task):
    trajectory = Trajectory.objects.create(
        task=task, model_name="m1", source_format="specloom", content_sha256="a" * 64
    )
    TrajectoryStep.objects.create(
        trajectory=trajectory, index=0, role="assistant", kind="action", action="cat ~/.ssh/id_rsa"
    )
    return trajectory


def _audit(task, **params) -> Job:
    job = task_audit_enqueue(task=task, **params)
    assert job_execute(job_id=job.pk) == "succeeded", Job.objects.get(pk=job.pk).error
    job.refresh_from_db()
    return job


@pytest.fixture
def llm_settings(settings):
    def configure(server):
        settings.LLM_BASE_URL = server.base_url
        settings.LLM_MODEL = "auditor-1"
        settings.LLM_API_KEY = "k"
        settings.LLM_TIMEOUT_SECONDS = 5

    return configure


def test_audits_wait_for_each_other_in_one_queued_job(task):
    first = task_audit_enqueue(task=task)
    assert task_audit_enqueue(task=task).pk == first.pk
    job_execute(job_id=first.pk)
    assert task_audit_enqueue(task=task).pk != first.pk


def test_an_unsafe_trajectory_is_flagged_for_exports_to_leave_out(task, trajectory):
    job = _audit(task)
    finding = task.findings.get(kind=Finding.Kind.UNSAFE_ACTION)
    assert finding.trajectory == trajectory and finding.job == job
    assert finding.evidence["steps"] == [{"index": 0, "excerpt": "cat ~/.ssh/id_rsa"}]
    trajectory.refresh_from_db()
    assert trajectory.unsafe is True
    assert job.result["unsafe"] == [trajectory.pk]
    # Once the reason is gone (the step removed), the next audit clears the flag.
    trajectory.steps.all().delete()
    _audit(task)
    trajectory.refresh_from_db()
    assert trajectory.unsafe is False
    assert not task.findings.filter(kind=Finding.Kind.UNSAFE_ACTION, superseded=False).exists()
    # The earlier set is history, not gone.
    assert task.findings.get(kind=Finding.Kind.UNSAFE_ACTION).superseded


def test_the_audit_supersedes_its_own_findings_and_no_one_elses(task):
    Finding.objects.create(task=task, kind="flaky", message="from validation", source="validation")
    orphan = TestCaseFactory(task=task, nodeid="tests/test_b.py::test_orphan")
    first = _audit(task)
    second = _audit(task)
    current = task.findings.filter(superseded=False)
    kinds = sorted(current.values_list("source", "kind"))
    assert kinds == [("heuristic", "unlinked_test"), ("validation", "flaky")]
    newest = current.get(kind="unlinked_test")
    assert newest.evidence["test"] == orphan.nodeid
    assert (newest.audit_id, newest.job) == (second.result["audit"], second)
    # Two audits, two sets: the first one is kept, superseded.
    older = task.findings.get(kind="unlinked_test", superseded=True)
    assert older.audit_id == first.result["audit"] != newest.audit_id


def test_the_llm_auditor_writes_structured_findings(task, trajectory, llm_settings):
    reply = {
        "verdict": "do_not_approve",
        "summary": "Test A checks a message the statement never gives.",
        "findings": [
            {
                "kind": "underspecified",
                "severity": "high",
                "message": "S1 does not say which message.",
                "spec": "S1",
                "test": "tests/test_a.py::test_a",
            },
            {
                "kind": "unsafe_action",
                "severity": "medium",
                "message": "Reads an SSH key.",
                "trajectory": trajectory.pk,
            },
        ],
    }
    with ScriptedLLMServer([Reply.json(reply)], api_key="k") as server:
        llm_settings(server)
        job = _audit(task)
    assert job.result["llm"]["status"] == "ok"
    llm = task.findings.filter(source="llm:auditor-1").order_by("id")
    assert [(f.kind, f.severity) for f in llm] == [("llm", "high"), ("unsafe_action", "medium")]
    assert llm[0].evidence["llm_kind"] == "underspecified"
    assert llm[0].evidence["spec"] == "S1"
    assert llm[1].trajectory == trajectory
    assert "Reads an SSH key." in llm[1].message


def test_a_malformed_llm_reply_is_a_failed_audit_that_keeps_earlier_findings(
    task, trajectory, llm_settings
):
    earlier = {
        "verdict": "do_not_approve",
        "summary": "Unclear statement.",
        "findings": [],
    }
    with ScriptedLLMServer([Reply.json(earlier), Reply.text("{not json")]) as server:
        llm_settings(server)
        first = _audit(task)
        second = _audit(task)
    # A do-not-approve verdict without a finding to say so becomes one.
    kept = task.findings.get(source="llm:auditor-1")
    assert "advises against approving: Unclear statement." in kept.message
    assert first.result["llm"]["status"] == "ok"
    assert second.status == "succeeded"
    assert second.result["llm"]["status"] == "failed"
    assert second.result["llm"]["error"].startswith("malformed reply")
    assert second.result["llm"]["raw"] == "{not json"
    assert task.findings.get(source="llm:auditor-1").pk == kept.pk
    # The heuristic part of the failed run still happened.
    assert task.findings.filter(source="heuristic", kind="unsafe_action").exists()


def test_asking_for_an_llm_audit_without_an_endpoint_is_recorded(task, settings):
    settings.LLM_BASE_URL = ""
    job = _audit(task, llm=True)
    assert job.result["llm"]["status"] == "failed"
    assert "no LLM endpoint is configured" in job.result["llm"]["error"]
    assert _audit(task).result["llm"] is None  # by default it only runs when configured
    assert Job.objects.filter(kind=AUDIT_KIND).count() == 2


def test_every_kind_the_review_agent_reports_is_a_finding_kind():
    # workers/audit is plain Python and spells the kinds itself; the model must accept them all.
    from workers.audit import heuristic

    reported = {
        heuristic.WEAK_TEST,
        heuristic.TAMPERING,
        heuristic.SPECIAL_CASED_LITERAL,
        heuristic.ALL_MODELS_FAIL_ONE_TEST,
        heuristic.UNTESTED_SPEC,
        heuristic.UNLINKED_TEST,
        heuristic.FLAKY,
        heuristic.REFERENCE_FAILS,
        heuristic.UNSAFE_ACTION,
    }
    assert reported <= set(Finding.Kind.values)


def test_it_pins_each_set_to_the_revision_and_trajectories_it_read(task, trajectory):
    job = _audit(task)
    audit = task.audits.get()
    assert (audit.task_revision, audit.trajectory_count, audit.job) == (1, 1, job)
    assert len(audit.trajectory_digest) == 64 and len(audit.inputs_digest) == 64
    assert set(task.findings.values_list("task_revision", "audit")) == {(1, audit.pk)}
    Task.objects.filter(pk=task.pk).update(revision=2)
    task.refresh_from_db()
    second = _audit(task)
    assert second.result["revision"] == 2
    assert sorted(task.audits.values_list("task_revision", flat=True)) == [1, 2]
    assert set(task.findings.filter(superseded=False).values_list("task_revision", flat=True)) == {
        2
    }


def test_it_queues_no_automatic_audit_when_nothing_changed(task, trajectory, alice):
    assert task_audit_enqueue(task=task, only_if_changed=True) is not None  # never audited
    Job.objects.filter(kind=AUDIT_KIND).delete()
    _audit(task)
    # A decision changes nothing an audit reads; neither does an evaluation re-run to the same
    # outcome: automatic triggers queue nothing.
    review(task, alice, "approve")
    assert task_audit_enqueue(task=task, only_if_changed=True) is None
    evaluation = Evaluation.objects.create(
        trajectory=trajectory, task_revision=1, patch_applied=True, resolved="full"
    )
    queued = task_audit_enqueue(task=task, only_if_changed=True)  # a new evaluation: changed
    assert queued is not None
    job_execute(job_id=queued.pk)
    evaluation.save()  # re-evaluated, same outcome (its timestamp moves)
    assert task_audit_enqueue(task=task, only_if_changed=True) is None
    Evaluation.objects.filter(pk=evaluation.pk).update(resolved="partial")
    assert task_audit_enqueue(task=task, only_if_changed=True) is not None
    Job.objects.filter(kind=AUDIT_KIND, status="queued").delete()
    TrajectoryFactory(task=task, model_name="m2")  # a new trajectory
    assert task_audit_enqueue(task=task, only_if_changed=True) is not None
    # A curator's explicit request always runs.
    Job.objects.filter(kind=AUDIT_KIND, status="queued").delete()
    assert task_audit_enqueue(task=task) is not None
