"""The eval script's pieces, and which node ids swebench's own parser reads back exactly."""

from __future__ import annotations

import pytest

from workers.harness import LOG_PARSER, eval_script, patch_paths, unreadable_ids
from workers.sandbox import EnvironmentSpec

IDS = [
    "tests/test_a.py::test_plain",
    "tests/test_a.py::TestK::test_method",
    "tests/test_a.py::test_p[zero [0]]",
    "tests/test_a.py::test_p[n\\xe9gatif \\u22121]",
    "tests/test_a.py::test_p[a - b]",
    "tests/test_a.py::test_p[two  spaces]",
    "tests/test_a.py::test_p[tab\there]",
    "tests/test_a.py::test_p[[1m]",
]


@pytest.mark.parametrize("nodeid", IDS)
def test_unreadable_ids_are_exactly_those_swebenchs_parser_does_not_give_back(nodeid):
    from swebench.harness.log_parsers import PARSER_REGISTRY

    parse = PARSER_REGISTRY[LOG_PARSER]
    log = f"PASSED {nodeid}\nFAILED {nodeid} - AssertionError: no\n"
    passed = parse(f"PASSED {nodeid}\n", None)
    failed = parse(f"FAILED {nodeid} - AssertionError: no\n", None)
    readable = passed.get(nodeid) == "PASSED" and failed.get(nodeid) == "FAILED"
    assert readable is (unreadable_ids([nodeid]) == []), log


def test_the_paths_of_a_diff_come_from_its_headers():
    patch = (
        "diff --git a/tests/test_x.py b/tests/test_x.py\n--- a/tests/test_x.py\n"
        "+++ b/tests/test_x.py\n@@ -1 +1 @@\n-a\n+b\n"
        "diff --git a/tests/new.py b/tests/new.py\nnew file mode 100644\n--- /dev/null\n"
        "+++ b/tests/new.py\n@@ -0,0 +1 @@\n+x\n"
    )
    assert patch_paths(patch) == ["tests/test_x.py", "tests/new.py"]


def test_the_script_runs_exactly_the_ids_with_the_recipes_options_between_the_markers():
    environment = EnvironmentSpec(
        pytest_addopts="-q", pytest_options=("-p", "no:randomly"), environment=(("K", "v w"),)
    )
    script = eval_script(
        environment=environment,
        test_patch="diff --git a/t.py b/t.py\n--- a/t.py\n+++ b/t.py\n@@ -1 +1 @@\n-a\n+b",
        fail_to_pass=["t.py::test_a[x y]"],
        pass_to_pass=["t.py::test_b"],
    )
    lines = script.splitlines()
    start = lines.index(": '>>>>> Start Test Output'")
    assert lines[start + 2] == ": '>>>>> End Test Output'"
    assert lines[start + 1].endswith(
        "-o addopts=-q -p no:randomly -- 't.py::test_a[x y]' t.py::test_b"
    )
    assert "export LANG=C.UTF-8" in script and "K='v w'" in script
    # The test patch goes in through a quoted heredoc, ending in a newline it lacked.
    heredoc = next(line for line in lines if line.startswith("git apply"))
    delimiter = heredoc.split("<<'")[1].split("'")[0]
    assert lines[lines.index(delimiter) - 1] == "+b"
