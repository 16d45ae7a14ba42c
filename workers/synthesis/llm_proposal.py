"""A well-formed LLM proposal on its way to a task: its patch made canonical, the validation
it goes through, what the model must fix when validation disagrees, and the proposal itself.

Plain Python (no Django). The model's reference patch is applied in a scratch index
(`gitstore.scratch_index`): its blobs never enter the stored repository.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from workers.gitstore import GitError, apply_to_index, git, read_file, scratch_index
from workers.patchcore import PatchParseError, PatchPart, split_by_function
from workers.sandbox.types import Snapshot
from workers.synthesis.coverage_map import CoverageMap
from workers.synthesis.difficulty import estimate_difficulty
from workers.synthesis.llm_context import ModuleContext
from workers.synthesis.llm_schema import ProposalDraft
from workers.synthesis.proposals import ReferencePart, SpecProposal, TaskProposal, spec_key_order
from workers.synthesis.source import SourceTree
from workers.validation import FAIL_TO_PASS, ValidationOutcome

# Passing tests of the chosen module added as PASS_TO_PASS when a coverage map is given: the
# reference must not break what worked.
MAX_EXISTING_PASS_TO_PASS = 10
_MAX_MESSAGE_CHARS = 600
_MAX_PROBLEM_TESTS = 12


def normalise_patch(git_dir: Path, commit: str, patch: str) -> tuple[str, str]:
    """(the patch as git writes it, "") if it applies to `commit`, else ("", git's complaint).

    Models get hunk line counts wrong and mangle headers; `--recount` forgives the counts (the
    sandbox applies patches the same way), and re-diffing gives a canonical patch that every
    later step (storage, splitting into parts, evaluation) can parse.
    """
    try:
        with scratch_index(git_dir, commit) as env:
            apply_to_index(git_dir, env, patch.encode())
            tree = git("write-tree", git_dir=git_dir, env=env).strip()
            diff = git(
                "diff",
                "--no-color",
                "--no-ext-diff",
                "--no-renames",
                commit,
                tree,
                git_dir=git_dir,
                env=env,
            )
    except GitError as error:
        return "", error.stderr[-2000:] or str(error)
    return diff, ""


def reference_parts(snapshot: Snapshot, tree: SourceTree, reference_patch: str) -> list[PatchPart]:
    """The reference split by function; none when it cannot be split (no interaction check)."""
    git_dir = Path(snapshot.git_dir)

    def read_base(path: str) -> str | None:
        if path in tree.files:
            return tree.files[path]
        return read_file(git_dir, snapshot.commit, path)

    try:
        return split_by_function(reference_patch, read_base)
    except PatchParseError:
        return []  # then the interaction check is skipped; the task is still valid


def existing_pass_to_pass(
    coverage: CoverageMap | None, context: ModuleContext, named: set[str], seed: int
) -> list[str]:
    """Up to MAX_EXISTING_PASS_TO_PASS passing tests that reach the module, chosen by seed."""
    if coverage is None:
        return []
    prefix = f"{context.module_path}::"
    tests = {
        test
        for fid, covering in coverage.tests_of.items()
        if fid.startswith(prefix)
        for test in covering
        if test in coverage.passing and test not in named
    }
    ordered = sorted(tests)
    if len(ordered) <= MAX_EXISTING_PASS_TO_PASS:
        return ordered
    rng = random.Random(f"llm-p2p:{seed}:{context.module_path}")  # noqa: S311
    return sorted(rng.sample(ordered, MAX_EXISTING_PASS_TO_PASS))


def validation_problems(outcome: ValidationOutcome) -> list[str]:
    """What the model must fix, from a validation outcome; empty when the task holds.

    Stricter than `outcome.verified`: every test the proposal names must end up in the role it
    was meant for, since a test that passes without the feature or flakes verifies nothing.
    """
    problems = [] if outcome.verified else list(outcome.reasons)
    mismatched = [v for v in outcome.tests.values() if v.role != v.intended]
    for verdict in mismatched[:_MAX_PROBLEM_TESTS]:
        runs = (
            f" (base: {', '.join(verdict.outcomes_base) or 'not run'}; "
            f"reference: {', '.join(verdict.outcomes_reference) or 'not run'})"
        )
        line = f"{verdict.nodeid}, meant as {verdict.intended}, is {verdict.role}: "
        line += (verdict.reason or "see the runs") + runs
        if verdict.intended == FAIL_TO_PASS and "missing" in verdict.outcomes_base:
            line += (
                ". It was not collected on the current code: import only existing modules at "
                "the top of the test file and reach new names inside the tests"
            )
        if verdict.message:
            message = verdict.message.strip()
            if len(message) > _MAX_MESSAGE_CHARS:
                message = "..." + message[-_MAX_MESSAGE_CHARS:]
            line += f"\n  failure output: {message}"
        problems.append(line)
    if len(mismatched) > _MAX_PROBLEM_TESTS:
        problems.append(f"... and {len(mismatched) - _MAX_PROBLEM_TESTS} more tests like these")
    if problems and outcome.verified:
        # Notes (collection errors) explain the mismatches; they are not problems on their own.
        problems += list(outcome.reasons)
    return problems


def build_proposal(
    *,
    draft: ProposalDraft,
    outcome: ValidationOutcome,
    base_commit: str,
    reference_patch: str,
    test_patch: str,
    parts: list[PatchPart],
    metadata: dict[str, Any],
) -> TaskProposal:
    """The verified proposal: specs keep the tests validation bore out, parts their specs."""
    fail_to_pass = [c.nodeid for c in draft.fail_to_pass]
    survivors = set(outcome.fail_to_pass) | set(outcome.pass_to_pass)
    specs = [
        SpecProposal(
            key=spec.key,
            kind=spec.kind,
            statement=spec.statement,
            rationale=spec.rationale,
            verified_by=[t for t in draft.tests_of(spec.key) if t in survivors],
        )
        for spec in draft.specs
    ]
    keys_of_test = {c.nodeid: c.spec_keys for c in draft.fail_to_pass}
    parts_with_specs = [
        ReferencePart(
            name=part.name,
            patch=part.patch,
            # The specs whose tests fail when this part is left out: observed, not guessed.
            spec_keys=sorted(
                {k for t in outcome.part_failures.get(part.name, []) for k in keys_of_test[t]},
                key=spec_key_order,
            ),
        )
        for part in parts
    ]
    changed = sum(
        1
        for line in reference_patch.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    )
    difficulty = estimate_difficulty(
        lines_removed=changed,
        functions=max(1, len(parts)),
        tests=len(fail_to_pass),
        dependencies=len(draft.dependencies),
        error_contracts=sum(1 for s in draft.specs if s.kind == "error-handling"),
    )
    return TaskProposal(
        title=draft.title,
        problem_statement=draft.problem_statement,
        base_commit=base_commit,
        reference_patch=reference_patch,
        test_patch=test_patch,
        fail_to_pass=fail_to_pass,
        pass_to_pass=[t for t in outcome.pass_to_pass if t not in fail_to_pass],
        specs=specs,
        dependencies=draft.dependencies,
        reference_parts=parts_with_specs,
        difficulty=difficulty,
        metadata={
            **metadata,
            "interaction_score": outcome.interaction_score,
            "part_failures": outcome.part_failures,
            "validation_notes": list(outcome.reasons),
            "validation_seconds": outcome.seconds,
        },
    )
