"""Patches applied in order on a fresh working copy; a patch that does not apply is a result."""

from __future__ import annotations

import difflib

import pytest

from workers.sandbox import Outcome, RunRequest
from workers.sandbox.patches import describe_failure, parse_hunks

PACKAGE = "src/sampleproj/__init__.py"
BASE = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
ONCE = BASE + '\n\nVERSION = "patched-once"\n'
TWICE = BASE + '\n\nVERSION = "patched-twice"\n'


def unified_diff(path: str, before: str | None, after: str | None) -> str:
    lines = difflib.unified_diff(
        (before or "").splitlines(keepends=True),
        (after or "").splitlines(keepends=True),
        fromfile=f"a/{path}" if before is not None else "/dev/null",
        tofile=f"b/{path}" if after is not None else "/dev/null",
    )
    return "".join(lines)


@pytest.fixture(scope="module")
def patch_snapshot(make_snapshot):
    return make_snapshot(
        {
            "tests/test_version.py": """\
                import sampleproj


                def test_version():
                    assert sampleproj.VERSION == "patched-twice"
                """,
            "tests/test_hidden.py": "def test_hidden():\n    assert False\n",
        }
    )


@pytest.mark.slow
def test_it_applies_patches_in_order(backend, patch_snapshot):
    # The second patch only applies on top of the first.
    patches = (unified_diff(PACKAGE, BASE, ONCE), unified_diff(PACKAGE, ONCE, TWICE))
    result = backend.run(RunRequest(snapshot=patch_snapshot, patches=patches))
    assert result.patch_failure is None
    assert result.tests["tests/test_version.py::test_version"].outcome == Outcome.PASSED


@pytest.mark.slow
def test_it_adds_test_files_from_a_patch_after_removing_paths(backend, patch_snapshot):
    new_test = "def test_from_patch():\n    pass\n"
    result = backend.run(
        RunRequest(
            snapshot=patch_snapshot,
            remove_paths=("tests/test_hidden.py", "tests/test_version.py"),
            patches=(unified_diff("tests/test_new.py", None, new_test),),
        )
    )
    assert list(result.tests) == ["tests/test_new.py::test_from_patch"]


@pytest.mark.slow
def test_it_names_the_file_and_hunk_of_a_patch_that_does_not_apply(backend, patch_snapshot):
    wrong_base = BASE.replace("a + b", "a - b")
    patches = (
        unified_diff(PACKAGE, BASE, ONCE),
        unified_diff(PACKAGE, wrong_base, wrong_base.replace("a - b", "b + a")),
    )
    result = backend.run(RunRequest(snapshot=patch_snapshot, patches=patches))
    failure = result.patch_failure
    assert failure is not None
    assert failure.patch_index == 1
    assert failure.file == PACKAGE
    assert failure.hunk.startswith("@@ -1,")
    assert "patch does not apply" in failure.message
    assert result.tests == {}
    assert result.exit_code is None
    assert not result.ok


@pytest.mark.slow
@pytest.mark.parametrize("failing", [0, 1, 2])
def test_it_names_the_failing_patch_among_several(backend, patch_snapshot, failing):
    # All patches go to one `git apply`; the one that failed is found by applying them again
    # one at a time on fresh files.
    new_file = unified_diff("notes.txt", None, "one\n")
    good = [unified_diff(PACKAGE, BASE, ONCE), unified_diff(PACKAGE, ONCE, TWICE), new_file]
    bad = unified_diff(PACKAGE, BASE.replace("a + b", "a - b"), BASE)
    patches = tuple(bad if index == failing else patch for index, patch in enumerate(good))
    result = backend.run(RunRequest(snapshot=patch_snapshot, patches=patches))
    assert result.patch_failure is not None
    assert result.patch_failure.patch_index == failing
    assert result.patch_failure.file == PACKAGE
    assert result.tests == {}


@pytest.mark.slow
def test_it_reports_a_corrupt_patch(backend, patch_snapshot):
    result = backend.run(
        RunRequest(snapshot=patch_snapshot, patches=("--- a/x\n+++ b/x\n@@ garbage\n",))
    )
    assert result.patch_failure is not None
    assert result.patch_failure.patch_index == 0
    assert result.patch_failure.message


def test_it_finds_the_hunk_git_names_by_its_old_start():
    patch = (
        "--- a/pkg/mod.py\n+++ b/pkg/mod.py\n"
        "@@ -1,3 +1,3 @@ first\n a\n-b\n+c\n"
        "@@ -10,3 +10,3 @@ def second():\n x\n-y\n+z\n"
        "--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1 @@\n+n\n"
    )
    failure = describe_failure(
        2,
        patch,
        "error: patch failed: pkg/mod.py:10\nerror: pkg/mod.py: patch does not apply\n",
    )
    assert (failure.patch_index, failure.file) == (2, "pkg/mod.py")
    assert failure.hunk == "@@ -10,3 +10,3 @@ def second():"
    assert [hunk.file for hunk in parse_hunks(patch)] == ["pkg/mod.py", "pkg/mod.py", "pkg/new.py"]


def test_it_names_the_file_when_git_gives_no_line():
    failure = describe_failure(0, "", "error: pkg/gone.py: No such file or directory\n")
    assert (failure.file, failure.hunk) == ("pkg/gone.py", "")
