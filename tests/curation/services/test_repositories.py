import zipfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from curation.models import Repository
from curation.services.repositories import RepositoryImportError, repository_import
from tests.curation.repo_sources import git_repo, tar, write_project
from workers import gitstore

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "repos"

pytestmark = pytest.mark.django_db


def _nothing_written(repo_storage: Path) -> bool:
    leftovers = [p.name for p in repo_storage.iterdir()] if repo_storage.exists() else []
    return not leftovers and not Repository.objects.exists()


class TestGoodInputs:
    def test_it_imports_a_plain_folder_as_a_one_commit_repository(self, repo_storage, tmp_path):
        folder = write_project(tmp_path / "mylib")
        repo = repository_import(source=str(folder))
        assert repo.name == "mylib"
        assert repo.source_kind == "path"
        assert (repo_storage / "mylib.git").is_dir()
        assert gitstore.list_files(repo.git_dir, repo.default_commit) == [
            "pyproject.toml",
            "src/pkg/__init__.py",
            "tests/test_add.py",
        ]
        assert repo.layout["src_layout"] is True
        assert repo.layout["packages"] == ["src/pkg"]
        assert repo.layout["test_dirs"] == ["tests"]
        assert repo.layout["test_framework"] == "pytest"
        assert repo.setup_command == "pip install ."

    def test_it_never_resolves_a_folder_inside_another_work_tree_to_the_enclosing_repo(
        self, repo_storage
    ):
        # examples/repos/* sit inside our own checkout; they must import as themselves.
        repo = repository_import(source=str(EXAMPLES / "ledger"), name="ledger")
        files = gitstore.list_files(repo.git_dir, repo.default_commit)
        assert "pyproject.toml" in files
        assert not any(f.startswith(("curation/", "workers/", "examples/")) for f in files)
        assert not any("__pycache__" in f for f in files)

    def test_it_imports_a_local_git_repository_with_its_history(self, repo_storage, tmp_path):
        folder, log = git_repo(tmp_path / "hist")
        repo = repository_import(source=str(folder), commit=log[1])
        assert repo.default_commit == log[1]
        assert gitstore.resolve_commit(repo.git_dir, log[0]) == log[0]

    def test_it_imports_a_git_url(self, repo_storage, tmp_path):
        folder, log = git_repo(tmp_path / "remote")
        repo = repository_import(source=f"file://{folder}", name="from-url")
        assert repo.source_kind == "git"
        assert repo.default_commit == log[0]

    def test_it_imports_a_tar_gz_with_a_top_folder(self, repo_storage, tmp_path):
        archive = tar(
            tmp_path / "pkg-1.0.tar.gz",
            {
                "pkg-1.0/setup.py": b"",
                "pkg-1.0/pkg/__init__.py": b"",
                "pkg-1.0/tests/test_a.py": b"",
            },
        )
        repo = repository_import(source=str(archive))
        assert repo.name == "pkg-10"
        assert repo.source_kind == "archive"
        assert sorted(gitstore.list_files(repo.git_dir, repo.default_commit)) == [
            "pkg/__init__.py",
            "setup.py",
            "tests/test_a.py",
        ]
        assert repo.layout["src_layout"] is False
        assert repo.layout["packages"] == ["pkg"]

    def test_it_imports_a_zip(self, repo_storage, tmp_path):
        archive = tmp_path / "zipped.zip"
        with zipfile.ZipFile(archive, "w") as zf:
            zf.writestr("zipped/__init__.py", "")
            zf.writestr("test_zipped.py", "import unittest\nclass T(unittest.TestCase):\n  pass\n")
        repo = repository_import(source=str(archive), name="zipped")
        assert "test_zipped.py" in gitstore.list_files(repo.git_dir, repo.default_commit)
        assert repo.layout["test_framework"] == "unittest"

    def test_the_command_prints_what_it_imported(self, repo_storage, tmp_path, capsys):
        folder = write_project(tmp_path / "cmdlib")
        call_command("import_repo", str(folder), "--name", "cmd-lib")
        out = capsys.readouterr().out
        assert "Imported cmd-lib at" in out
        assert "src layout: yes" in out


class TestBadInputs:
    @pytest.mark.parametrize(
        ("make_source", "message"),
        [
            (lambda tmp: str(tmp / "missing"), "is not a repository"),
            (lambda tmp: "not a url at all", "is not a repository"),
        ],
        ids=["missing path", "nonsense"],
    )
    def test_it_rejects_what_is_not_a_repository(
        self, repo_storage, tmp_path, make_source, message
    ):
        with pytest.raises(RepositoryImportError, match=message):
            repository_import(source=make_source(tmp_path))
        assert _nothing_written(repo_storage)

    def test_it_rejects_a_file_that_is_not_an_archive(self, repo_storage, tmp_path):
        (tmp_path / "notes.txt").write_text("hi")
        with pytest.raises(RepositoryImportError, match="not a supported archive"):
            repository_import(source=str(tmp_path / "notes.txt"))

    def test_it_rejects_an_unknown_commit_and_writes_nothing(self, repo_storage, tmp_path):
        folder, _ = git_repo(tmp_path / "c")
        with pytest.raises(RepositoryImportError, match="commit 'deadbeef' does not exist"):
            repository_import(source=str(folder), commit="deadbeef")
        assert _nothing_written(repo_storage)

    def test_it_rejects_a_duplicate_name(self, repo_storage, tmp_path):
        repository_import(source=str(write_project(tmp_path / "dup")))
        with pytest.raises(RepositoryImportError, match="already exists"):
            repository_import(source=str(write_project(tmp_path / "other")), name="dup")
        assert Repository.objects.count() == 1

    def test_it_rejects_a_git_url_that_cannot_be_cloned(self, repo_storage, tmp_path):
        with pytest.raises(RepositoryImportError, match="could not clone"):
            repository_import(source=f"file://{tmp_path}/nope.git")
        assert _nothing_written(repo_storage)

    @pytest.mark.parametrize(
        ("members", "links", "message"),
        [
            ({"../evil.py": b"x"}, {}, "contains '..'"),
            ({"/etc/evil.py": b"x"}, {}, "absolute path"),
            ({"top/a.py": b""}, {"top/link": "../../outside"}, "outside the archive"),
            ({"top/a.py": b""}, {"top/link": "/etc/passwd"}, "links to an absolute path"),
        ],
        ids=["dot-dot entry", "absolute entry", "link escaping", "absolute link"],
    )
    def test_it_rejects_unsafe_tar_entries(self, repo_storage, tmp_path, members, links, message):
        archive = tar(tmp_path / "bad.tar.gz", members, links)
        with pytest.raises(RepositoryImportError, match=message):
            repository_import(source=str(archive))
        assert _nothing_written(repo_storage)
        assert not (tmp_path / "evil.py").exists()

    def test_it_rejects_zip_entries_with_dot_dot(self, repo_storage, tmp_path):
        archive = tmp_path / "bad.zip"
        with zipfile.ZipFile(archive, "w") as zf:
            zf.writestr("../escape.py", "x")
        with pytest.raises(RepositoryImportError, match=r"contains '\.\.'"):
            repository_import(source=str(archive))
        assert _nothing_written(repo_storage)

    def test_it_rejects_archives_over_the_file_count_limit(self, repo_storage, tmp_path, settings):
        settings.SPECLOOM_ARCHIVE_MAX_FILES = 3
        archive = tar(tmp_path / "many.tar.gz", {f"m/f{i}.py": b"" for i in range(5)})
        with pytest.raises(RepositoryImportError, match="more than 3 entries"):
            repository_import(source=str(archive))
        assert _nothing_written(repo_storage)

    def test_it_rejects_archives_over_the_size_limit(self, repo_storage, tmp_path, settings):
        settings.SPECLOOM_ARCHIVE_MAX_BYTES = 10_000
        # Compresses to almost nothing, expands past the limit: the header sizes give it away.
        archive = tar(tmp_path / "bomb.tar.gz", {"b/big.bin": b"\0" * 50_000})
        with pytest.raises(RepositoryImportError, match="expands to more than 10000 bytes"):
            repository_import(source=str(archive))
        assert _nothing_written(repo_storage)

    def test_it_rejects_a_corrupt_archive(self, repo_storage, tmp_path):
        (tmp_path / "broken.tar.gz").write_bytes(b"\x1f\x8b not really gzip")
        with pytest.raises(RepositoryImportError, match="could not be read"):
            repository_import(source=str(tmp_path / "broken.tar.gz"))
        assert _nothing_written(repo_storage)

    def test_it_rejects_an_empty_folder(self, repo_storage, tmp_path):
        (tmp_path / "empty").mkdir()
        with pytest.raises(RepositoryImportError, match="is empty"):
            repository_import(source=str(tmp_path / "empty"))
        assert _nothing_written(repo_storage)

    def test_the_command_reports_the_error_text(self, repo_storage, tmp_path):
        with pytest.raises(CommandError, match="is not a repository"):
            call_command("import_repo", str(tmp_path / "nope"))
