"""The evaluation engine on the marktext sample repository, in the real sandbox."""

import uuid
from pathlib import Path

import pytest

from workers import gitstore
from workers.evaluation import (
    EvaluationInput,
    check_patches,
    evaluate_patch,
    resolution,
    spec_satisfaction,
)
from workers.patchcore import split_by_function
from workers.patchcore.lenient import patch_paths as patch_files

pytestmark = pytest.mark.slow

SPEC_FILE = "tests/test_toc_spec.py::"
NESTING = f"{SPEC_FILE}test_toc_nests_headings_and_numbers_repeated_anchors"
UNIQUE = f"{SPEC_FILE}test_unique_slug_numbers_repeats_and_skips_taken_numbers"

FOREIGN_PATCH = """\
diff --git a/src/ponyc/main.c b/src/ponyc/main.c
--- a/src/ponyc/main.c
+++ b/src/ponyc/main.c
@@ -1,3 +1,3 @@
 int main(void) {
-  return 1;
+  return 0;
 }
"""

ORDER_DEPENDENT_TESTS = """\
diff --git a/tests/test_order.py b/tests/test_order.py
new file mode 100644
--- /dev/null
+++ b/tests/test_order.py
@@ -0,0 +1,9 @@
+SEEN = []
+
+
+def test_leaves_state_behind():
+    SEEN.append("polluted")
+
+
+def test_needs_a_clean_state():
+    assert SEEN == []
"""


def _input(snapshot, environment, task, patch: str, **overrides) -> EvaluationInput:
    values = {
        "snapshot": snapshot,
        "environment": environment,
        "patch": patch,
        "test_patch": task["test_patch"],
        "fail_to_pass": task["fail_to_pass"],
        "pass_to_pass": task["pass_to_pass"],
        "spec_tests": task["spec_tests"],
        **overrides,
    }
    return EvaluationInput(**values)


def test_it_finds_a_patch_that_does_not_apply_without_running_anything(
    marktext_base, marktext_task, environment, counting_runner
):
    outcome = evaluate_patch(
        _input(marktext_base, environment, marktext_task, FOREIGN_PATCH), counting_runner
    )
    assert counting_runner.requests == []
    assert outcome.patch_applied is False
    assert outcome.resolved == "none"
    assert outcome.patch_error.startswith("the final patch does not apply")
    assert "src/ponyc/main.c" in outcome.patch_error
    assert outcome.tests == {}
    assert outcome.spec_satisfied == {"S1": False, "S2": False, "S3": False}
    assert outcome.changed_files == ["src/ponyc/main.c"]
    assert outcome.runs == 0


def test_it_reports_text_that_is_not_a_diff(marktext_base, marktext_task, environment):
    def never_called(request):
        raise AssertionError("a patch that is not a diff must not reach the sandbox")

    outcome = evaluate_patch(
        _input(marktext_base, environment, marktext_task, "I fixed it, trust me."), never_called
    )
    assert outcome.patch_applied is False
    assert "not a unified diff" in outcome.patch_error


def test_a_patch_that_takes_the_hidden_tests_place_leaves_the_test_patch_unapplied(
    marktext_base, marktext_task, environment, counting_runner
):
    squatter = (
        "diff --git a/tests/test_toc_spec.py b/tests/test_toc_spec.py\n"
        "new file mode 100644\n--- /dev/null\n+++ b/tests/test_toc_spec.py\n"
        "@@ -0,0 +1 @@\n+def test_nothing():\n"
    )
    outcome = evaluate_patch(
        _input(marktext_base, environment, marktext_task, squatter), counting_runner
    )
    assert counting_runner.requests == []
    assert outcome.patch_applied is True
    assert outcome.patch_error.startswith("the task's test patch does not apply")
    assert outcome.resolved == "none"
    assert outcome.touched_test_files == ["tests/test_toc_spec.py"]


def test_the_reference_resolves_the_task_fully(
    marktext_base, marktext_task, environment, counting_runner
):
    outcome = evaluate_patch(
        _input(marktext_base, environment, marktext_task, marktext_task["reference_patch"]),
        counting_runner,
    )
    assert outcome.patch_applied and outcome.patch_error == ""
    assert outcome.resolved == "full"
    assert set(outcome.tests.values()) == {"passed"}
    assert len(outcome.tests) == 7
    assert outcome.spec_satisfied == {"S1": True, "S2": True, "S3": True}
    assert outcome.runs == 1  # nothing failed, nothing to run again
    assert outcome.touched_test_files == []
    # The hidden tests came from the task, the patch from the trajectory, in that order.
    request = counting_runner.requests[0]
    assert request.patches == (marktext_task["reference_patch"], marktext_task["test_patch"])


def test_a_partial_solution_satisfies_some_specs(
    marktext_base, marktext_task, environment, counting_runner
):
    parts = split_by_function(
        marktext_task["reference_patch"],
        lambda path: gitstore.read_file(marktext_base.git_dir, marktext_base.commit, path),
    )
    # Everything but the nesting: unique anchors work, the table of contents stays flat.
    without_nesting = "".join(p.patch for p in parts if not p.name.endswith("_nest"))
    outcome = evaluate_patch(
        _input(marktext_base, environment, marktext_task, without_nesting), counting_runner
    )
    assert outcome.resolved == "partial"
    assert outcome.tests[UNIQUE] == "passed"
    assert outcome.tests[NESTING] != "passed"
    assert outcome.spec_satisfied["S1"] is False
    assert outcome.spec_satisfied["S2"] is False  # the nesting test verifies S2 as well
    assert outcome.runs == 2  # the failing tests ran once more
    assert counting_runner.requests[1].tests == tuple(
        n for n, o in outcome.tests.items() if o != "passed"
    )
    assert outcome.flaky == {}


def test_an_empty_patch_runs_the_tests_on_the_base(
    marktext_base, marktext_task, environment, counting_runner
):
    outcome = evaluate_patch(
        _input(marktext_base, environment, marktext_task, "", rerun_failures=0), counting_runner
    )
    assert outcome.patch_applied is True
    assert outcome.resolved == "none"
    assert outcome.changed_files == []
    assert counting_runner.requests[0].patches == (marktext_task["test_patch"],)
    pass_to_pass = marktext_task["pass_to_pass"]
    assert all(outcome.tests[n] == "passed" for n in pass_to_pass)
    assert outcome.runs == 1


def test_a_test_that_flips_on_its_rerun_is_flaky_and_counts_as_passed(
    marktext_base, marktext_task, environment, counting_runner
):
    # The second test fails after the first has run, and passes when run alone: an ordering
    # dependency, one of the usual causes of flaky tests.
    first = "tests/test_order.py::test_leaves_state_behind"
    second = "tests/test_order.py::test_needs_a_clean_state"
    outcome = evaluate_patch(
        _input(
            marktext_base,
            environment,
            marktext_task,
            "",
            test_patch=ORDER_DEPENDENT_TESTS,
            fail_to_pass=(first, second),
            pass_to_pass=(),
            spec_tests=(("S1", (first, second)),),
        ),
        counting_runner,
    )
    assert outcome.flaky == {second: ["failed", "passed"]}
    assert outcome.tests == {first: "passed", second: "passed"}
    assert outcome.resolved == "full"
    assert outcome.spec_satisfied == {"S1": True}


def test_check_patches_names_the_failing_patch(marktext_base, marktext_task):
    assert check_patches(marktext_base, (marktext_task["reference_patch"],)) is None
    failure = check_patches(
        marktext_base, (marktext_task["reference_patch"], marktext_task["reference_patch"])
    )
    assert failure is not None and failure.patch_index == 1
    assert failure.file == "marktext/anchors.py"


def test_check_patches_writes_nothing_into_the_stored_repository(marktext_base, marktext_task):
    def stored_objects() -> set[str]:
        objects = Path(marktext_base.git_dir) / "objects"
        return {str(path.relative_to(objects)) for path in objects.rglob("*") if path.is_file()}

    new_file = (
        "diff --git a/NOTES.txt b/NOTES.txt\nnew file mode 100644\n--- /dev/null\n"
        f"+++ b/NOTES.txt\n@@ -0,0 +1 @@\n+written by an agent {uuid.uuid4()}\n"
    )
    before = stored_objects()
    assert check_patches(marktext_base, (marktext_task["reference_patch"], new_file)) is None
    assert stored_objects() == before


def test_resolution_and_spec_satisfaction_rules():
    f2p = ("a", "b")
    assert resolution({}, f2p) == "none"
    assert resolution({"a": "passed", "b": "passed", "c": "passed"}, f2p) == "full"
    assert resolution({"a": "passed", "b": "failed", "c": "passed"}, f2p) == "partial"
    assert resolution({"a": "failed", "b": "error", "c": "passed"}, f2p) == "none"
    assert resolution({"a": "passed", "b": "passed", "c": "failed"}, f2p) == "partial"
    assert resolution({"a": "skipped", "b": "missing"}, f2p) == "none"
    outcomes = {"a": "passed", "b": "failed"}
    assert spec_satisfaction(outcomes, (("S1", ("a",)), ("S2", ("a", "b")), ("S3", ("z",)))) == {
        "S1": True,
        "S2": False,
    }


def test_patch_files_names_both_sides_of_a_rename():
    rename = (
        "diff --git a/tests/test_old.py b/tests/test_new.py\n"
        "similarity index 100%\nrename from tests/test_old.py\nrename to tests/test_new.py\n"
    )
    assert patch_files(rename) == ["tests/test_old.py", "tests/test_new.py"]
    assert patch_files("") == []


def test_a_patch_without_its_last_newline_still_applies(
    marktext_base, marktext_task, environment, counting_runner
):
    # As SWE-bench predictions often come: the diff's final newline dropped.
    patch = marktext_task["reference_patch"].rstrip("\n")
    outcome = evaluate_patch(
        _input(marktext_base, environment, marktext_task, patch), counting_runner
    )
    assert outcome.patch_error == ""
    assert outcome.resolved == "full"
