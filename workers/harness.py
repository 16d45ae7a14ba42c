"""What the official SWE-bench harness (swebench >= 5) needs to run a task: its image, an eval
script, a log parser of its own and an eval type.

Plain Python (no Django, no swebench import: swebench is a test dependency only). The harness
starts a container of `image` (images.py: the repository at the task's base commit in /testbed,
the environment's venv at /opt/specloom-env), applies the model's patch in /testbed with git,
prepends `#!/bin/bash` and `set -uxo pipefail` to `eval_script` and runs it, then reads the
log with the parser named by `log_parser` between its markers. The script here

1. puts back the files of the test patch that the model's patch may have changed, and applies
   the test patch (exactly as our evaluation does: model patch, then test patch);
2. runs exactly the FAIL_TO_PASS and PASS_TO_PASS node ids with pytest's `-rA` summary (a line
   `PASSED <node id>`, `FAILED <node id> - ...` per test), with the recipe's pytest options, the
   sandbox's variables and the working copy on `sys.path` as the sandbox puts it;
3. marks the test output with the harness's own markers (`: '>>>>> Start Test Output'`, which
   bash's xtrace prints), the test command directly before the end marker, where the harness
   records its exit status.

`parse_log_pytest_v2` reads the summary lines whole (`parse_log_pytest` would cut an id at its
first space, and ids with spaces are common in parametrised tests). What it cannot read back
exactly (`unreadable_ids`) is an id with a run of whitespace, a control character, a ` - ` (cut
off as a failure message) or an ANSI-like `[1m`.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Iterable

from workers.sandbox.images import ENV_PREFIX, WORKDIR, environment_variables
from workers.sandbox.types import EnvironmentSpec

LOG_PARSER = "parse_log_pytest_v2"
EVAL_TYPE = "pass_and_fail"
START_TEST_OUTPUT = ">>>>> Start Test Output"
END_TEST_OUTPUT = ">>>>> End Test Output"
APPLY_PATCH_FAIL = ">>>>> Patch Apply Failed"
PYTEST_ARGUMENTS = (
    "-rA",
    "-p",
    "no:cacheprovider",
    f"--rootdir={WORKDIR}",
    "--continue-on-collection-errors",
)

_DIFF_GIT = re.compile(r"^diff --git a/(.+?) b/(.+?)\s*$")
_FILE_HEADER = re.compile(r"^(?:---|\+\+\+) (?:[ab]/)?([^\t\n]+?)\s*$")
_UNREADABLE = re.compile(r"\s{2}|[\x00-\x1f\x7f]|\[\d+m| - |^\s|\s$")


def unreadable_ids(nodeids: Iterable[str]) -> list[str]:
    """Ids that `parse_log_pytest_v2` would not give back exactly from pytest's -rA lines."""
    return [nodeid for nodeid in nodeids if _UNREADABLE.search(nodeid)]


def patch_paths(patch: str) -> list[str]:
    """Every path a diff names (old and new names), from its headers: no diff library, since
    an export calls this for every task."""
    paths: list[str] = []
    for line in patch.splitlines():
        line = line.rstrip("\r")
        names: list[str] = []
        if match := _DIFF_GIT.match(line):
            names = [match.group(1), match.group(2)]
        elif match := _FILE_HEADER.match(line):
            names = [match.group(1)]
        for name in names:
            if name != "/dev/null" and name not in paths:
                paths.append(name)
    return paths


def _heredoc_delimiter(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
    delimiter = f"EOF_SPECLOOM_{digest[:24]}"
    lines = set(text.splitlines())
    while delimiter in lines:  # practically never: a diff line holding the very digest
        delimiter += "_"
    return delimiter


def pytest_command(
    environment: EnvironmentSpec, nodeids: Iterable[str], *, python: str = "python"
) -> list[str]:
    """pytest over exactly `nodeids`, with the recipe's addopts and options, from WORKDIR."""
    argv = [python, "-m", "pytest", *PYTEST_ARGUMENTS]
    if environment.pytest_addopts is not None:
        argv += ["-o", f"addopts={environment.pytest_addopts}"]
    argv += [*environment.pytest_options, "--", *nodeids]
    return argv


def eval_script(
    *,
    environment: EnvironmentSpec,
    test_patch: str,
    fail_to_pass: Iterable[str],
    pass_to_pass: Iterable[str],
) -> str:
    """The `eval_script` of a SWE-bench record (the harness adds the shebang and `set -uxo`)."""
    nodeids = list(dict.fromkeys([*fail_to_pass, *pass_to_pass]))
    files = patch_paths(test_patch) if test_patch.strip() else []
    variables = " ".join(
        f"{name}={shlex.quote(value)}" for name, value in environment_variables(environment)
    )
    reset = ""
    if files:
        quoted = " ".join(shlex.quote(path) for path in files)
        # What the model changed in the test files goes back to the base (a file the test
        # patch creates is removed) before the test patch is applied, as SWE-bench does.
        reset = (
            f'for f in {quoted}; do git checkout -q HEAD -- "$f" 2>/dev/null || rm -f -- "$f"; done'
        )
    lines = [
        "#!/bin/bash",
        "set -uxo pipefail",
        f"cd {WORKDIR}",
        f"export {variables}",
        f"export PATH={ENV_PREFIX}/bin:$PATH VIRTUAL_ENV={ENV_PREFIX}",
    ]
    if reset:
        lines.append(reset)
    if test_patch.strip():
        patch = test_patch if test_patch.endswith("\n") else test_patch + "\n"
        delimiter = _heredoc_delimiter(patch)
        lines += [
            "git apply --verbose --recount --whitespace=nowarn - <<'"
            + delimiter
            + "' || echo '"
            + APPLY_PATCH_FAIL
            + "'",
            *patch[:-1].split("\n"),
            delimiter,
        ]
    lines += [
        # The working copy (and its src/ folder, decided after the patches) on sys.path, as
        # the sandbox puts it (pytest_invocation.sandbox_environment).
        f"if [ -d src ]; then export PYTHONPATH={WORKDIR}/src:{WORKDIR};"
        f" else export PYTHONPATH={WORKDIR}; fi",
        f": '{START_TEST_OUTPUT}'",
        " ".join(shlex.quote(arg) for arg in pytest_command(environment, nodeids)),
        f": '{END_TEST_OUTPUT}'",
    ]
    if reset:
        lines.append(reset)
    return "\n".join(lines) + "\n"
