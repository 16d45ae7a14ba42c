"""Reviewed tasks built with factories (no git needed), and a way to cut a release in a test."""

from __future__ import annotations

from django.apps import apps

from curation.models import Evaluation, Release, SpecResult, Task, TestCase
from curation.services.releases import release_cut
from tests.factories import (
    RepositoryFactory,
    SpecDependencyFactory,
    SpecificationFactory,
    TaskFactory,
    TestCaseFactory,
    TrajectoryFactory,
)
from workers.models import Job
from workers.services import job_execute

REFERENCE_PATCH = """\
diff --git a/src/pkg/mod.py b/src/pkg/mod.py
--- a/src/pkg/mod.py
+++ b/src/pkg/mod.py
@@ -1,2 +1,2 @@
 def f(x):
-    raise NotImplementedError
+    return x + 1
"""
TEST_PATCH = """\
diff --git a/tests/test_mod.py b/tests/test_mod.py
new file mode 100644
--- /dev/null
+++ b/tests/test_mod.py
@@ -0,0 +1,2 @@
+def test_f():
+    assert f(1) == 2
"""
# Parametrised ids with spaces, brackets and escaped unicode must survive byte for byte.
ODD_NODEID = "tests/test_mod.py::test_f[n\\xe9gatif \\u22121]"


def reviewed_task(
    *,
    dataset,
    status: str = Task.Status.APPROVED,
    repository=None,
    origin: str = Task.Origin.PROCEDURAL,
    difficulty: str = "15m-1h",
) -> Task:
    """A task with two coupled specs, an F2P test of both, a P2P test and a flaky one."""
    task = TaskFactory(
        dataset=dataset,
        status=status,
        repository=repository or RepositoryFactory(),
        origin=origin,
        difficulty=difficulty,
        reference_patch=REFERENCE_PATCH,
        test_patch=TEST_PATCH,
    )
    # Validated: a FAIL_TO_PASS test verifies both specs.
    s1 = SpecificationFactory(task=task, key="S1", kind="functional", order=0, verified=True)
    s2 = SpecificationFactory(task=task, key="S2", kind="error-handling", order=1, verified=True)
    SpecDependencyFactory(task=task, from_spec=s1, to_spec=s2, relation="constrains")
    f2p = TestCaseFactory(task=task, nodeid=ODD_NODEID, role=TestCase.Role.FAIL_TO_PASS)
    f2p.specs.add(s1, s2)
    TestCaseFactory(
        task=task,
        nodeid="tests/test_mod.py::test_old",
        intended_role=TestCase.Intent.PASS_TO_PASS,
        role=TestCase.Role.PASS_TO_PASS,
    )
    TestCaseFactory(task=task, nodeid="tests/test_mod.py::test_coin", role=TestCase.Role.FLAKY)
    return task


def review(task: Task, reviewer, decision: str, **rubric):
    Review = apps.get_model("review", "Review")
    values = {"spec_clarity": 0, "test_validity": 0, "interdependency": 0, "difficulty": "<15m"}
    values.update(rubric)
    return Review.objects.create(
        task=task, reviewer=reviewer, task_revision=task.revision, decision=decision, **values
    )


def evaluated_trajectory(task: Task, *, model: str, resolved: str, unsafe: bool = False):
    trajectory = TrajectoryFactory(task=task, model_name=model, unsafe=unsafe, final_patch="diff")
    evaluation = Evaluation.objects.create(
        trajectory=trajectory,
        task_revision=task.revision,
        resolved=resolved,
        patch_applied=True,
        test_outcomes={ODD_NODEID: "passed" if resolved == "full" else "failed"},
    )
    for spec in task.specs.all():
        SpecResult.objects.create(
            evaluation=evaluation, spec=spec, satisfied=resolved == "full" or spec.key == "S1"
        )
    return trajectory


def cut(dataset, *, version: str | None = None, **options) -> Release:
    """Cut a release and run its job here, as a worker would."""
    release = release_cut(dataset=dataset, version=version, **options)
    outcome = job_execute(job_id=release.job_id)
    assert outcome == "succeeded", Job.objects.get(pk=release.job_id).error
    return Release.objects.select_related("dataset").get(pk=release.pk)
