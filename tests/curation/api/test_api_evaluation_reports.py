"""The evaluation matrix, pass rates, audit calibration and audit runs over the API."""

import pytest

from curation.models import Evaluation, SpecResult, Task, Trajectory
from tests.curation.release_helpers import review
from tests.factories import DatasetFactory, SpecificationFactory, TaskFactory
from workers.models import Job

pytestmark = pytest.mark.django_db


def _evaluated(task, model: str, satisfied: dict, resolved: str, sha: str) -> Trajectory:
    trajectory = Trajectory.objects.create(
        task=task, model_name=model, source_format="specloom", content_sha256=sha * 64
    )
    evaluation = Evaluation.objects.create(
        trajectory=trajectory, task_revision=1, patch_applied=True, resolved=resolved
    )
    specs = {spec.key: spec for spec in task.specs.all()}
    for key, ok in satisfied.items():
        SpecResult.objects.create(evaluation=evaluation, spec=specs[key], satisfied=ok)
    return trajectory


@pytest.fixture
def evaluated_task(dataset):
    task = TaskFactory(dataset=dataset)
    SpecificationFactory(task=task, key="S1", kind="functional")
    SpecificationFactory(task=task, key="S2", kind="error-handling")
    SpecificationFactory(task=task, key="S3", kind="error-handling")
    _evaluated(task, "functional-coder", {"S1": True, "S2": False, "S3": False}, "partial", "a")
    _evaluated(task, "functional-coder", {"S1": True, "S2": True, "S3": False}, "partial", "b")
    _evaluated(task, "careful-coder", {"S1": True, "S2": True, "S3": True}, "full", "c")
    return task


def test_the_matrix_shows_which_specs_each_model_honours(client, alice, evaluated_task):
    client.force_login(alice)
    response = client.get(f"/api/v1/evaluation-matrix?task={evaluated_task.pk}")
    assert response.status_code == 200
    matrix = response.json()
    assert matrix["models"] == ["careful-coder", "functional-coder"]
    assert [s["key"] for s in matrix["specs"]] == ["S1", "S2", "S3"]
    cells = {(c["model"], c["spec"]): (c["satisfied"], c["total"]) for c in matrix["cells"]}
    assert cells[("functional-coder", "S1")] == (2, 2)
    assert cells[("functional-coder", "S2")] == (1, 2)
    assert cells[("functional-coder", "S3")] == (0, 2)
    resolution = {row["model"]: row for row in matrix["resolution"]}
    assert resolution["functional-coder"]["partial"] == 2
    assert resolution["careful-coder"]["resolved_rate"] == 1.0


def test_pass_rates_by_kind_per_task_and_per_dataset(client, alice, evaluated_task):
    client.force_login(alice)
    by_task = client.get(f"/api/v1/pass-rates?task={evaluated_task.pk}").json()
    rates = {(r["model"], r["kind"]): r["rate"] for r in by_task["rates"]}
    assert rates[("functional-coder", "functional")] == 1.0
    assert rates[("functional-coder", "error-handling")] == 0.25
    assert rates[("careful-coder", "error-handling")] == 1.0
    # Another task of the dataset counts in the dataset's rates.
    other = TaskFactory(dataset=evaluated_task.dataset)
    SpecificationFactory(task=other, key="S1", kind="functional")
    _evaluated(other, "functional-coder", {"S1": False}, "none", "d")
    by_dataset = client.get("/api/v1/pass-rates?dataset=core").json()
    rates = {(r["model"], r["kind"]): r["rate"] for r in by_dataset["rates"]}
    assert rates[("functional-coder", "functional")] == round(2 / 3, 4)
    assert by_dataset["dataset"] == "core"


@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("/api/v1/evaluation-matrix", 400),
        ("/api/v1/evaluation-matrix?task=abc", 400),
        ("/api/v1/evaluation-matrix?task=999999", 404),
        ("/api/v1/pass-rates", 400),
        ("/api/v1/pass-rates?task={task}&dataset=core", 400),
        ("/api/v1/pass-rates?dataset=missing", 404),
        ("/api/v1/audits", 400),
        ("/api/v1/audit-calibration?dataset=missing", 404),
    ],
)
def test_bad_input_gets_a_clear_error(client, alice, evaluated_task, url, status):
    client.force_login(alice)
    response = client.get(url.format(task=evaluated_task.pk))
    assert response.status_code == status
    assert response.json()["error"]["message"]


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/evaluation-matrix?task={task}",
        "/api/v1/pass-rates?task={task}",
        "/api/v1/audit-calibration",
        "/api/v1/audits?task={task}",
    ],
)
def test_reports_are_read_only_and_closed_to_outsiders(client, carol, bob, evaluated_task, url):
    url = url.format(task=evaluated_task.pk)
    client.force_login(bob)
    assert client.get(url).status_code == 200
    if "/audits" not in url:  # the only report one may POST to (it queues an audit)
        assert client.post(url, data={}, content_type="application/json").status_code == 405
    assert client.delete(url).status_code == 405
    assert client.put(url, data={}, content_type="application/json").status_code == 405
    client.force_login(carol)
    assert client.get(url).status_code == 403


def test_a_reviewer_cannot_see_another_datasets_matrix(client, alice):
    hidden = TaskFactory(dataset=DatasetFactory(name="private"))
    client.force_login(alice)
    assert client.get(f"/api/v1/evaluation-matrix?task={hidden.pk}").status_code == 404
    assert client.get("/api/v1/pass-rates?dataset=private").status_code == 404


def test_calibration_and_audit_runs(client, alice, dataset):
    # Four decisions: the auditor flags the two a human turned down and one they approved.
    decisions = ["reject", "request_changes", "approve", "approve", None]
    tasks = [TaskFactory(dataset=dataset) for _ in decisions]
    for task in tasks[:3] + tasks[4:]:
        SpecificationFactory(task=task, key="S1", kind="functional")  # untested: a high finding
    for task in tasks:
        _audit(task)
    for task, decision in zip(tasks, decisions, strict=True):
        if decision:  # made after the audit: the decision is compared with its findings
            review(task, alice, decision)
    client.force_login(alice)
    body = client.get("/api/v1/audit-calibration?dataset=core").json()
    (report,) = body["datasets"]
    assert report["decided_tasks"] == 4 and report["audited_tasks"] == 4
    agent = report["auditors"]["review_agent"]
    assert (agent["true_positive"], agent["false_positive"], agent["false_negative"]) == (2, 1, 0)
    assert agent["precision"] == round(2 / 3, 4) and agent["recall"] == 1.0
    # p_o = 3/4; p_e = 3/4 * 2/4 + 1/4 * 2/4 = 1/2; kappa = (3/4 - 1/2) / (1/2)
    assert agent["kappa"] == 0.5
    assert agent["verdict"] == "not_enough_decisions"  # 4 < 30
    assert report["baselines"]["always_approve"]["recall"] == 0
    assert report["baselines"]["always_flag"]["recall"] == 1
    assert report["baselines"]["random"]["kappa"] == 0
    assert report["auditors"]["llm"]["n"] == 0  # no LLM audit ran
    assert report["decisions"] == {"total": 4, "blind": 0, "informed": 4, "compared": 4}

    runs = client.get(f"/api/v1/audits?task={tasks[0].pk}").json()["audits"]
    assert runs[0]["status"] == "succeeded"
    assert runs[0]["findings"] == {"heuristic": 1, "llm": 0, "unsafe": []}
    assert runs[0]["revision"] == 1


def _audit(task: Task) -> None:
    """Run an audit job to its end, as a worker would."""
    from curation.services.audit import task_audit_enqueue
    from workers.services import job_execute

    job = task_audit_enqueue(task=task)
    assert job_execute(job_id=job.pk) == "succeeded"


def test_a_curator_queues_an_audit_and_a_reviewer_cannot(client, alice, bob, evaluated_task):
    url = f"/api/v1/audits?task={evaluated_task.pk}"
    client.force_login(alice)
    assert client.post(url).status_code == 403
    client.force_login(bob)
    response = client.post(url + "&llm=false")
    assert response.status_code == 202
    job = Job.objects.get(pk=response.json()["job"])
    assert (job.kind, job.params) == ("audit_task", {"task_id": evaluated_task.pk, "llm": False})
    # A second request while the first waits gets the same job.
    assert client.post(url).json()["job"] == job.pk
    assert client.post("/api/v1/audits?task=abc").status_code == 400
    assert client.post(url + "&llm=sometimes").status_code == 400
