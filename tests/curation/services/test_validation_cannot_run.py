"""A validation that cannot run ends as a failed job with ONE finding that carries the output.

Real sandbox runs on the marktext sample. The broken test patches are written straight into
the row (the save-time gates would refuse them): tasks from before the gates, or breakage the
gates cannot see (an import that fails only when pytest collects the module).
"""

import pytest

from curation.models import Task
from curation.services.validation import task_validation_enqueue
from tests.curation.tasks_fixtures import hand_made_task
from workers.models import Job
from workers.services import job_execute

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def _run(task: Task) -> Job:
    job = task_validation_enqueue(task=task, reruns=1)
    assert job_execute(job_id=job.pk) == "failed"
    job.refresh_from_db()
    task.refresh_from_db()
    return job


def test_a_test_patch_that_breaks_collection_fails_the_job_with_one_finding(
    repo_storage, sandbox_root, dataset
):
    task = hand_made_task("marktext_toc", dataset=dataset)
    broken = task.test_patch.replace(
        "+import pytest\n", "+import pytest\n+import no_such_module_here\n", 1
    ).replace("@@ -0,0 +1,39 @@", "@@ -0,0 +1,40 @@", 1)
    Task.objects.filter(pk=task.pk).update(test_patch=broken)
    task.refresh_from_db()

    job = _run(task)

    assert job.status == Job.Status.FAILED
    assert job.message.startswith("validation could not run: no FAIL_TO_PASS test was collected")
    assert "Traceback" not in job.error  # an honest outcome, not a crash
    assert job.result["verified"] is False
    findings = list(task.findings.all())
    assert len(findings) == 1
    finding = findings[0]
    assert finding.severity == "high" and finding.source == "validation"
    assert finding.message.startswith("Validation could not run")
    tail = finding.evidence["output_tail"]
    assert "no_such_module_here" in tail and "ModuleNotFoundError" in tail
    # No server path of the sandbox's run folders leaks into what people read.
    assert "/runs/" not in tail and "specloom-test-sandbox" not in tail
    assert not any("/runs/" in reason for reason in task.validation["reasons"])
    assert task.status == Task.Status.DRAFT and task.validated_revision is None
    assert task.validation["could_not_run"]


def test_a_patch_that_does_not_apply_fails_the_job_with_one_finding(
    repo_storage, sandbox_root, dataset
):
    task = hand_made_task("marktext_toc", dataset=dataset)
    Task.objects.filter(pk=task.pk).update(
        reference_patch=task.reference_patch.replace("raise NotImplementedError", "pass  # x")
    )
    task.refresh_from_db()

    job = _run(task)

    assert "does not apply" in job.message and "marktext/anchors.py" in job.message
    assert task.findings.count() == 1
    finding = task.findings.get()
    assert "does not apply" in finding.evidence["output_tail"]
    assert set(finding.evidence["tests"]) == set(task.tests.values_list("nodeid", flat=True))
