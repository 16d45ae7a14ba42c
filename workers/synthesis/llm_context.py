"""What the model sees: the repository's file tree, one module, its tests, and its coverage.

Also the words of the conversation: the system prompt (role, schema, rules), the request for a
proposal, and the feedback message that turns a failed round into the next request. The rules
in the prompt are the ones a proposal is later checked against, stated up front so that a
capable model gets them right in the first round.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from workers.synthesis.coverage_map import CoverageMap
from workers.synthesis.llm_schema import PROPOSAL_SCHEMA
from workers.synthesis.proposals import SPEC_KINDS
from workers.synthesis.source import SourceTree

# Budgets in characters: enough for a module of a few hundred lines and its main test file,
# small enough for the 16-32k token windows of the local models people run.
MAX_TREE_ENTRIES = 300
MAX_SOURCE_CHARS = 30_000
MAX_TEST_CHARS = 16_000
MAX_COVERAGE_LINES = 60
# Modules this short rarely leave room for a feature with several interacting specs.
_MIN_MODULE_CHARS = 200


@dataclass(frozen=True)
class ModuleContext:
    module_path: str
    module_name: str
    test_paths: tuple[str, ...]  # the existing test files shown to the model
    text: str  # the context as the model reads it (markdown)


def candidate_modules(tree: SourceTree) -> list[str]:
    """Source modules worth extending: non-test Python files that define a function."""
    paths = [
        path
        for path in tree.source_paths
        if re.search(r"^\s*(async\s+)?def ", tree.files[path], re.MULTILINE)
        and len(tree.files[path]) >= _MIN_MODULE_CHARS
    ]
    return paths or [p for p in tree.source_paths if tree.files[p].strip()]


def module_order(tree: SourceTree, seed: int) -> list[str]:
    """The modules in the order tasks use them: a shuffle that depends only on the seed."""
    paths = sorted(candidate_modules(tree))
    random.Random(f"llm-modules:{seed}").shuffle(paths)  # noqa: S311 (a choice, not a secret)
    return paths


def related_tests(tree: SourceTree, module_path: str) -> list[str]:
    """Test files that import the module or are named after it, the most direct first."""
    dotted = tree.module_name(module_path)
    package, _, stem = dotted.rpartition(".")
    imports = [
        rf"^\s*import\s+{re.escape(dotted)}\b",
        rf"^\s*from\s+{re.escape(dotted)}\s+import\b",
    ]
    if package:
        imports.append(rf"^\s*from\s+{re.escape(package)}\s+import\s+[^#\n]*\b{re.escape(stem)}\b")
    scored = []
    for path in tree.test_paths:
        text = tree.files[path]
        score = 0
        if any(re.search(pattern, text, re.MULTILINE) for pattern in imports):
            score += 2
        if PurePosixPath(path).stem in (f"test_{stem}", f"{stem}_test"):
            score += 3
        elif stem and stem in PurePosixPath(path).stem:
            score += 1
        if score:
            scored.append((-score, path))
    return [path for _, path in sorted(scored)]


def build_context(
    *,
    tree: SourceTree,
    files: list[str],
    module_path: str,
    coverage: CoverageMap | None = None,
) -> ModuleContext:
    """The user message that shows the model the repository and the module to extend.

    `tree` holds the snapshot's Python files, `files` every path of the snapshot.
    """
    if module_path not in tree.files:
        raise ValueError(f"{module_path} is not a Python file of the snapshot")
    dotted = tree.module_name(module_path)
    sections = [_tree_section(files), _module_section(tree, module_path, dotted)]
    shown: list[str] = []
    budget = MAX_TEST_CHARS
    for path in related_tests(tree, module_path):
        text = tree.files[path]
        if len(text) > budget:
            if not shown:  # one file cut short beats none at all
                shown.append(path)
                sections.append(_file_block(path, text[:budget], cut=True))
            break
        budget -= len(text)
        shown.append(path)
        sections.append(_file_block(path, text))
    if not shown:
        sections.append("No existing test file imports this module.")
    if coverage is not None:
        sections.append(_coverage_section(coverage, module_path))
    sections.append(
        f"Propose one new task that extends `{module_path}` (import name `{dotted}`). "
        "The feature may touch other source files when it needs to."
    )
    return ModuleContext(
        module_path=module_path,
        module_name=dotted,
        test_paths=tuple(shown),
        text="\n\n".join(sections),
    )


def _tree_section(files: list[str]) -> str:
    listed = sorted(files)[:MAX_TREE_ENTRIES]
    more = len(files) - len(listed)
    tail = f"\n... and {more} more files" if more > 0 else ""
    return f"## Repository files ({len(files)})\n\n```\n" + "\n".join(listed) + tail + "\n```"


def _module_section(tree: SourceTree, path: str, dotted: str) -> str:
    text = tree.files[path]
    cut = len(text) > MAX_SOURCE_CHARS
    heading = f"## The module to extend: `{path}` (import name `{dotted}`)"
    return heading + "\n\n" + _fence(text[:MAX_SOURCE_CHARS] if cut else text, cut=cut)


def _file_block(path: str, text: str, *, cut: bool = False) -> str:
    return f"## Existing tests: `{path}`\n\n" + _fence(text, cut=cut)


def _fence(text: str, *, cut: bool) -> str:
    # A fence longer than any backtick run inside the file, so the file cannot close it.
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    note = "\n# ... (cut here: the file is longer)" if cut else ""
    return f"{fence}python\n{text.rstrip()}{note}\n{fence}"


def _coverage_section(coverage: CoverageMap, module_path: str) -> str:
    prefix = f"{module_path}::"
    lines = []
    covered_ids = {fid for fid in coverage.tests_of if fid.startswith(prefix)}
    for fid in sorted(covered_ids):
        tests = sorted(coverage.tests_of[fid])
        example = f", e.g. `{tests[0]}`" if tests else ""
        lines.append(f"- `{fid.removeprefix(prefix)}`: {len(tests)} passing test(s){example}")
    if not lines:
        lines.append("- no function of this module is covered by a passing test")
    if len(lines) > MAX_COVERAGE_LINES:
        lines = [*lines[:MAX_COVERAGE_LINES], f"- ... and {len(lines) - MAX_COVERAGE_LINES} more"]
    return "## Coverage of this module's functions by the existing tests\n\n" + "\n".join(lines)


def system_prompt() -> str:
    kinds = ", ".join(SPEC_KINDS)
    schema = json.dumps(PROPOSAL_SCHEMA, indent=1)
    return f"""\
You design benchmark tasks for coding agents from a real Python repository.

A task is a NEW feature for the repository as it is now: a small, coherent change (typically
20 to 150 lines in one to three functions) described by several *interdependent*
specifications. Interdependent means that a solver who satisfies one specification but ignores
how it interacts with another fails a test: the feature raises a specific error that a caller
relies on, keeps an existing signature working, validates input before using it, and so on.

Answer with ONE JSON object and nothing else. It must match this JSON Schema:

{schema}

Rules the answer is checked against:
1. specs: 2 to 8 specifications with keys S1, S2, ...; kind is one of: {kinds}. Each statement
   describes observable, testable behaviour; the rationale says why it matters.
2. dependencies: edges between spec keys; "from" depends on "to"; relation in a word or two
   (uses, constrains, guards, extends, ...).
3. tests.path is a NEW test file beside the existing tests (e.g. tests/test_<feature>.py) and
   tests.code its full content, in pytest style.
   - The file must import cleanly on the CURRENT code: import only existing modules at the top
     and reach the new names inside the test functions (`from pkg import mod` at the top,
     `mod.new_function(...)` in the test). A file that fails to import before the change
     cannot tell a solution from none.
   - fail_to_pass lists node ids `<tests.path>::<test_name>` (`<tests.path>::<Class>::<test>`
     for methods, `name[param-id]` for parametrised cases) that FAIL on the current code and
     PASS with the reference patch, each with the spec keys it verifies. Every spec needs at
     least one test.
   - pass_to_pass (optional) lists tests, existing or new, that pass both before and after.
   - Tests are deterministic: no network, no sleeping, no clock or randomness without a seed.
4. reference_patch is the complete solution as a unified diff against the files as shown
   (`git diff` format: `--- a/<path>`, `+++ b/<path>`, `@@` hunks whose context lines are
   copied exactly). It changes source code only, never tests.
5. problem_statement is markdown for the solver: what to build, where (module, names and
   signatures) and the behaviour every spec requires, without giving the implementation away.

The sandbox then runs your tests on the current code (they must fail) and with your reference
patch (they must pass). If anything is wrong you get the problems back and answer again with
the complete, corrected JSON object."""


def task_request(context: ModuleContext, earlier_titles: list[str]) -> str:
    if not earlier_titles:
        return context.text
    listed = "\n".join(f"- {title}" for title in earlier_titles)
    return (
        f"{context.text}\n\nTasks already made from this repository (propose something "
        f"different):\n{listed}"
    )


_STATUS_EXPLAINED = {
    "malformed": "your answer was not a JSON object",
    "schema-invalid": "your answer does not match the schema or contradicts itself",
    "validation-failed": (
        "the sandbox checked it: 'base' is the current code plus your new test file, "
        "'reference' adds your reference patch"
    ),
}


def feedback_message(round_number: int, status: str, problems: list[str]) -> str:
    explained = _STATUS_EXPLAINED.get(status, status)
    listed = "\n".join(f"- {problem}" for problem in problems) or "- (no details)"
    return (
        f"Round {round_number} failed: {explained}.\n\nProblems:\n{listed}\n\n"
        "Fix every problem and answer with the complete JSON object again (all fields, not "
        "only the changed ones)."
    )
