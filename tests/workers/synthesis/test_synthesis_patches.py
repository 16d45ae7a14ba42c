"""Patches must be what `git apply` accepts: each checked in a real work tree."""

import subprocess
import textwrap

from workers.patchcore import split_by_function
from workers.synthesis.edits import (
    LineEdit,
    apply_edits,
    creation_patch,
    deletion_patch,
    file_patch,
    invert_edits,
    split_lines,
)
from workers.synthesis.functions import build_function_table
from workers.synthesis.source import SourceTree
from workers.synthesis.stubs import stub_edits

# Methods close together: their hunks would merge in a plain diff.
CLOSE = textwrap.dedent(
    """\
    class Counter:
        def __init__(self):
            self.n = 0
            self.log = []

        def bump(self):
            self.n += 1
            return self.n

        def reset(self):
            self.n = 0
            self.log.clear()


    def helper(c):
        c.bump()
        return c.n
    """
)


def stubbed_and_reference(text, names, path="pkg/counter.py"):
    table = build_function_table(SourceTree(files={path: text}))
    fns = [table.functions[f"{path}::{n}"] for n in names]
    edits = stub_edits(text, fns)
    stubbed = apply_edits(text, edits)
    reference = file_patch(path, stubbed, invert_edits(split_lines(text), edits))
    return stubbed, reference


def test_stub_and_reference_patches_apply_with_git(worktree, git_apply):
    root = worktree({"pkg/counter.py": CLOSE})
    stubbed, reference = stubbed_and_reference(
        CLOSE, ["Counter.__init__", "Counter.bump", "helper"]
    )
    table = build_function_table(SourceTree(files={"pkg/counter.py": CLOSE}))
    fns = [
        table.functions[f"pkg/counter.py::{n}"]
        for n in ["Counter.__init__", "Counter.bump", "helper"]
    ]
    stub_patch = file_patch("pkg/counter.py", CLOSE, stub_edits(CLOSE, fns))
    assert git_apply(root, stub_patch).returncode == 0
    assert (root / "pkg/counter.py").read_text() == stubbed
    result = git_apply(root, reference)
    assert result.returncode == 0, result.stderr
    assert (root / "pkg/counter.py").read_text() == CLOSE


def test_every_part_and_every_complement_applies(worktree, git_apply):
    names = ["Counter.__init__", "Counter.bump", "Counter.reset", "helper"]
    stubbed, reference = stubbed_and_reference(CLOSE, names)
    parts = split_by_function(reference, {"pkg/counter.py": stubbed}.get)
    # One naming scheme for synthesis and validation: path::Qualified.name.
    assert [part.name for part in parts] == [f"pkg/counter.py::{n}" for n in names]
    for number, part in enumerate(parts):
        alone = worktree({"pkg/counter.py": stubbed}, name=f"alone-{number}")
        assert git_apply(alone, part.patch).returncode == 0
        # The complement (all parts but this one) applies at once: a leave-one-out run never
        # depends on how the other parts shifted lines.
        without = worktree({"pkg/counter.py": stubbed}, name=f"without-{number}")
        result = git_apply(without, part.complement)
        assert result.returncode == 0, (part.complement, result.stderr)
        # It is the finished code with only the left-out function still stubbed.
        only_that_one, _ = stubbed_and_reference(CLOSE, [part.name.split("::")[1]])
        assert (without / "pkg/counter.py").read_text() == only_that_one


def test_split_cuts_a_git_made_hunk_that_spans_functions(worktree, git_apply):
    """A patch from `git diff` merges close functions into one hunk; splitting cuts it."""
    names = ["Counter.bump", "Counter.reset"]
    stubbed, _ = stubbed_and_reference(CLOSE, names)
    root = worktree({"pkg/counter.py": stubbed})
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    (root / "pkg/counter.py").write_text(CLOSE)
    diff = subprocess.run(
        ["git", "diff"], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    assert diff.count("@@ -") == 1  # one hunk holds both functions
    parts = split_by_function(diff, {"pkg/counter.py": stubbed}.get)
    assert [part.name.split("::")[1] for part in parts] == names
    for part in parts:
        fresh = worktree({"pkg/counter.py": stubbed}, name=part.name.split("::")[1])
        result = git_apply(fresh, part.patch)
        assert result.returncode == 0, (part.patch, result.stderr)


def test_file_creation_deletion_and_missing_newline_round_trip(worktree, git_apply):
    text = "def test_a():\n    assert 1\n\n\ndef test_b():\n    assert 2"  # no final newline
    root = worktree({"tests/test_x.py": text, "tests/test_gone.py": "def test_c():\n    pass\n"})
    edits = [LineEdit(5, 6, ())]
    hidden = apply_edits(text, edits)
    hide = file_patch("tests/test_x.py", text, edits) + deletion_patch(
        "tests/test_gone.py", "def test_c():\n    pass\n"
    )
    result = git_apply(root, hide)
    assert result.returncode == 0, (hide, result.stderr)
    assert not (root / "tests/test_gone.py").exists()
    assert (root / "tests/test_x.py").read_text() == hidden
    restore = file_patch(
        "tests/test_x.py", hidden, invert_edits(split_lines(text), edits)
    ) + creation_patch("tests/test_gone.py", "def test_c():\n    pass\n")
    result = git_apply(root, restore)
    assert result.returncode == 0, (restore, result.stderr)
    assert (root / "tests/test_x.py").read_text() == text
    assert (root / "tests/test_gone.py").read_text() == "def test_c():\n    pass\n"


def test_reference_part_of_a_created_file_is_the_whole_file():
    patch = creation_patch("pkg/new.py", "X = 1\n") + deletion_patch("pkg/old.py", "Y = 2\n")
    parts = split_by_function(patch, {"pkg/old.py": "Y = 2\n"}.get)
    assert [part.name for part in parts] == ["pkg/new.py", "pkg/old.py"]
