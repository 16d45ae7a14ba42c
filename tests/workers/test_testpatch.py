"""workers.testpatch: a test's code is read from, and written into, the hidden test patch; the
rebuilt patch applies with git; Python files a patch leaves behind must compile."""

import subprocess
from pathlib import Path

import pytest

from workers import testpatch
from workers.patchcore import PatchParseError

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tasks" / "marktext_toc"
TESTS_PATCH = (FIXTURE / "tests.patch").read_text()
PARAM_ID = "tests/test_toc_spec.py::test_toc_rejects_a_max_level_out_of_range[level [0]]"

BASE_FILE = """import pytest


class TestSlug:
    def test_plain(self):
        assert slug("A b") == "a-b"

    @pytest.mark.parametrize("n", [1, 2])
    def test_numbered(self, n):
        assert n


def test_plain():
    assert True
"""
MODIFY_PATCH = """diff --git a/tests/test_slug.py b/tests/test_slug.py
--- a/tests/test_slug.py
+++ b/tests/test_slug.py
@@ -12,3 +12,7 @@ class TestSlug:
 
 def test_plain():
     assert True
+
+
+def test_added():
+    assert slug("") == "section"
"""  # noqa: W293 - context lines of a diff


def read_base(path):
    return BASE_FILE if path == "tests/test_slug.py" else None


def test_it_reads_a_test_with_its_decorators_from_a_new_file():
    source, first = testpatch.source_of_test(TESTS_PATCH, PARAM_ID, None)
    assert first == 20
    assert source.startswith('@pytest.mark.parametrize("level", [0, 7]')
    assert source.rstrip().endswith("build_toc(parse_blocks(DOC), max_level=level)")


def test_it_reads_methods_by_class_and_functions_of_a_modified_file():
    method, first = testpatch.source_of_test(
        MODIFY_PATCH, "tests/test_slug.py::TestSlug::test_plain", read_base
    )
    assert method.strip().startswith("def test_plain(self):") and first == 5
    function, _ = testpatch.source_of_test(
        MODIFY_PATCH, "tests/test_slug.py::test_plain", read_base
    )
    assert function.startswith("def test_plain():")
    added, first = testpatch.source_of_test(
        MODIFY_PATCH, "tests/test_slug.py::test_added", read_base
    )
    assert added == 'def test_added():\n    assert slug("") == "section"' and first == 17


def test_it_finds_a_test_the_patch_does_not_touch_in_the_base():
    source, _ = testpatch.source_of_test(
        MODIFY_PATCH, "tests/test_slug.py::TestSlug::test_numbered[1]", read_base
    )
    assert source.strip().startswith("@pytest.mark.parametrize")


def test_it_rewrites_only_the_edited_test_and_the_patch_still_applies(tmp_path):
    source, _ = testpatch.source_of_test(TESTS_PATCH, PARAM_ID, None)
    edited = source.replace("max_level=level)", "max_level=level)  # reviewed")
    patch = testpatch.replace_test(TESTS_PATCH, PARAM_ID, edited, None)
    assert "+        build_toc(parse_blocks(DOC), max_level=level)  # reviewed\n" in patch
    assert patch.count("# reviewed") == 1
    assert testpatch.source_of_test(patch, PARAM_ID, None)[0] == edited
    # The other tests of the file are unchanged.
    other = "tests/test_toc_spec.py::test_heading_anchors_are_unique"
    assert testpatch.source_of_test(patch, other, None) == testpatch.source_of_test(
        TESTS_PATCH, other, None
    )
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "edit.patch").write_text(patch)
    subprocess.run(["git", "apply", "--check", "edit.patch"], cwd=tmp_path, check=True)


def test_it_rewrites_a_modified_file_against_its_base(tmp_path):
    nodeid = "tests/test_slug.py::TestSlug::test_plain"
    code = '    def test_plain(self):\n        assert slug("A  b") == "a-b"'
    patch = testpatch.replace_test(MODIFY_PATCH, nodeid, code, read_base)
    assert testpatch.source_of_test(patch, nodeid, read_base)[0] == code
    assert "test_added" in patch  # the patch's own change is kept
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "test_slug.py").write_text(BASE_FILE)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "edit.patch").write_text(patch)
    subprocess.run(["git", "apply", "edit.patch"], cwd=repo, check=True)
    text = (repo / "tests" / "test_slug.py").read_text()
    assert 'assert slug("A  b") == "a-b"' in text and "def test_added" in text


def test_it_edits_a_repository_test_by_adding_its_file_to_the_patch():
    nodeid = "tests/test_slug.py::TestSlug::test_numbered[2]"
    source, _ = testpatch.source_of_test(TESTS_PATCH, nodeid, read_base)
    patch = testpatch.replace_test(
        TESTS_PATCH, nodeid, source + "\n        assert n < 3", read_base
    )
    assert patch.startswith(TESTS_PATCH)
    assert "diff --git a/tests/test_slug.py b/tests/test_slug.py\n--- a/tests/test_slug.py" in patch


def test_the_same_code_leaves_the_patch_byte_for_byte():
    source, _ = testpatch.source_of_test(TESTS_PATCH, PARAM_ID, None)
    assert testpatch.replace_test(TESTS_PATCH, PARAM_ID, source, None) is TESTS_PATCH


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("def test_renamed(level):\n    pass", "must still define test_toc_rejects"),
        ("def test_toc_rejects_a_max_level_out_of_range(level:\n    pass", "line 20"),
        ("   ", "is empty"),
    ],
)
def test_it_refuses_code_that_would_not_run_under_the_test_id(code, message):
    with pytest.raises(testpatch.PatchEditError, match=message):
        testpatch.replace_test(TESTS_PATCH, PARAM_ID, code, None)


def test_it_refuses_a_test_it_cannot_find():
    with pytest.raises(testpatch.PatchEditError, match="edit the test patch itself"):
        testpatch.replace_test(TESTS_PATCH, "tests/test_toc_spec.py::test_nowhere", "x", None)


def test_it_says_file_line_and_error_of_a_patch_that_does_not_compile():
    broken = TESTS_PATCH.replace("+def test_heading_anchors_are_unique():", "+def test_x(:")
    errors = testpatch.patch_syntax_errors(broken, None)
    assert len(errors) == 1
    assert errors[0].startswith("tests/test_toc_spec.py, line 37: invalid syntax")
    assert "test_x(:" in errors[0]
    assert testpatch.patch_syntax_errors(TESTS_PATCH, None) == []


def test_it_compiles_a_modified_file_as_the_patch_leaves_it():
    broken = MODIFY_PATCH.replace('+    assert slug("") == "section"', "+    assert (")
    errors = testpatch.patch_syntax_errors(broken, read_base)
    assert len(errors) == 1 and "tests/test_slug.py, line 18" in errors[0]
    # Without the base the file cannot be rebuilt: the sandbox will say the patch does not fit.
    assert testpatch.patch_syntax_errors(broken, lambda path: None) == []


def test_non_python_files_and_deletions_are_not_compiled():
    patch = (
        "diff --git a/README.md b/README.md\nnew file mode 100644\n--- /dev/null\n"
        "+++ b/README.md\n@@ -0,0 +1 @@\n+def (:\n"
    )
    assert testpatch.patch_syntax_errors(patch, None) == []


def test_a_bad_diff_is_a_parse_error():
    with pytest.raises(PatchParseError):
        testpatch.patch_syntax_errors("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n", None)
