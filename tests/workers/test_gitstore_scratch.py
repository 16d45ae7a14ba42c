"""Applying patches in a scratch index: what a patch brings never enters the stored repository,
except the base states `commit_patch` makes of our own patches. Real git, temporary folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from workers import gitstore

PATCH = """\
diff --git a/mod.py b/mod.py
--- a/mod.py
+++ b/mod.py
@@ -1 +1 @@
-VALUE = 1
+VALUE = 2
"""


def _objects(git_dir: Path) -> set[str]:
    return {f"{p.parent.name}{p.name}" for p in (git_dir / "objects").glob("??/*")}


@pytest.fixture
def repository(tmp_path) -> tuple[Path, str]:
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "mod.py").write_text("VALUE = 1\n")
    git_dir = tmp_path / "repo.git"
    return git_dir, gitstore.commit_folder(folder, git_dir, "import")


def test_a_scratch_index_writes_nothing_into_the_repository(repository):
    git_dir, commit = repository
    before = _objects(git_dir)
    with gitstore.scratch_index(git_dir, commit) as env:
        gitstore.apply_to_index(git_dir, env, PATCH.encode())
        tree = gitstore.git("write-tree", git_dir=git_dir, env=env).strip()
        # Inside, the new tree reads like any other, the repository's objects included.
        assert gitstore.git("show", f"{tree}:mod.py", git_dir=git_dir, env=env) == "VALUE = 2\n"
    assert _objects(git_dir) == before
    with pytest.raises(gitstore.GitError):
        gitstore.git("cat-file", "-e", tree, git_dir=git_dir)


def test_a_patch_that_does_not_apply_raises_with_gits_reason(repository):
    git_dir, commit = repository
    with gitstore.scratch_index(git_dir, commit) as env, pytest.raises(gitstore.GitError) as error:
        gitstore.apply_to_index(git_dir, env, PATCH.replace("VALUE = 1", "VALUE = 9").encode())
    assert "patch does not apply" in error.value.stderr


def test_commit_patch_keeps_its_commit_and_is_deterministic(repository):
    git_dir, commit = repository
    made = gitstore.commit_patch(git_dir, commit, PATCH, "base state")
    assert gitstore.read_file(git_dir, made, "mod.py") == "VALUE = 2\n"
    assert gitstore.git("rev-parse", f"{made}^", git_dir=git_dir).strip() == commit
    assert gitstore.commit_patch(git_dir, commit, PATCH, "base state") == made
