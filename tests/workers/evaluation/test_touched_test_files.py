"""Which files of a patch are tests, conftest or test configuration (plain Python)."""

from workers.evaluation import is_test_path, touched_test_files
from workers.patchcore.lenient import patch_paths as patch_files


def _diff(path: str, hunks: str, *, new: bool = False) -> str:
    old = "/dev/null" if new else f"a/{path}"
    return f"diff --git a/{path} b/{path}\n--- {old}\n+++ b/{path}\n{hunks}"


def test_it_recognises_test_paths():
    for path in (
        "tests/test_x.py",
        "tests/helpers.py",
        "pkg/test/data.json",
        "test_x.py",
        "pkg/x_test.py",
        "conftest.py",
        "src/pkg/conftest.py",
        "pytest.ini",
        "tox.ini",
    ):
        assert is_test_path(path), path
    for path in ("src/pkg/testing_utils.py", "src/contest.py", "README.md", "setup.cfg"):
        assert not is_test_path(path), path


def test_it_names_test_files_and_conftest_but_not_sources():
    patch = _diff("src/pkg/core.py", "@@ -1 +1 @@\n-a\n+b\n") + _diff(
        "conftest.py", "@@ -0,0 +1 @@\n+import pytest\n", new=True
    )
    assert touched_test_files(patch) == ["conftest.py"]


PYPROJECT = """\
[project]
name = "pkg"
version = "1.0"

[tool.pytest.ini_options]
addopts = "-q"
testpaths = ["tests"]
"""


def test_pyproject_counts_only_when_its_pytest_section_changes():
    base = {
        "pyproject.toml": PYPROJECT,
        "setup.cfg": "[metadata]\nname = pkg\n\n[tool:pytest]\naddopts = -q\n",
    }
    version_bump = _diff(
        "pyproject.toml", '@@ -2,3 +2,3 @@\n name = "pkg"\n-version = "1.0"\n+version = "1.1"\n \n'
    )
    assert touched_test_files(version_bump, base.get) == []
    addopts = _diff(
        "pyproject.toml",
        "@@ -5,3 +5,3 @@\n [tool.pytest.ini_options]\n"
        '-addopts = "-q"\n+addopts = "-q --deselect tests/test_a.py"\n testpaths = ["tests"]\n',
    )
    assert touched_test_files(addopts, base.get) == ["pyproject.toml"]
    # A hunk that starts below the header: the section comes from the base file.
    below = _diff(
        "pyproject.toml",
        '@@ -6,2 +6,2 @@\n addopts = "-q"\n-testpaths = ["tests"]\n+testpaths = ["nothing"]\n',
    )
    assert touched_test_files(below, base.get) == ["pyproject.toml"]
    setup_cfg = _diff(
        "setup.cfg", "@@ -4,2 +4,2 @@\n [tool:pytest]\n-addopts = -q\n+addopts = -x\n"
    )
    assert touched_test_files(setup_cfg, base.get) == ["setup.cfg"]
    # Adding a pytest section to a new pyproject counts too.
    new = _diff(
        "pyproject.toml", "@@ -0,0 +1,2 @@\n+[tool.pytest.ini_options]\n+addopts = '-x'\n", new=True
    )
    assert touched_test_files(new, lambda path: None) == ["pyproject.toml"]


def test_an_empty_patch_touches_nothing():
    assert touched_test_files("") == []


def test_a_diff_unidiff_refuses_is_read_leniently():
    # CRLF line ends and a hunk cut short, as in real model output: git apply --recount may
    # still take it, so the files must be known without a strict parse.
    sloppy = (
        "diff --git a/tests/test_sqlite.py b/tests/test_sqlite.py\r\n"
        "--- a/tests/test_sqlite.py\r\n+++ b/tests/test_sqlite.py\r\n"
        "@@ -15,7 +15,9 @@ DATABASES = {\r\n     'default': {\r\n+        'NAME': 'x',\r\n"
    )
    assert patch_files(sloppy) == ["tests/test_sqlite.py"]
    assert touched_test_files(sloppy) == ["tests/test_sqlite.py"]
    config = sloppy.replace("tests/test_sqlite.py", "setup.cfg").replace(
        "'NAME': 'x'", "addopts = -p no:pytest_randomly"
    )
    assert touched_test_files(config) == ["setup.cfg"]
