"""Environment images: the Dockerfile (read back with a Dockerfile parser), its hash and name,
the deterministic build context, and the generated-files helper run by the image's build.

No Docker engine answers here: the Dockerfiles are checked with `dockerfile-parse` and by the
docker backend's unit tests (test_sandbox_docker.py); building one needs an engine.
"""

from __future__ import annotations

import io
import json
import shlex
import subprocess
import sys
import tarfile
from pathlib import PurePosixPath

import pytest
from dockerfile_parse import DockerfileParser

from workers.sandbox import EnvironmentSpec
from workers.sandbox.environments import TOOL_REQUIREMENTS
from workers.sandbox.forget_project import in_place_folder
from workers.sandbox.images import (
    CONTEXT_FILES,
    KEEP_GENERATED,
    SOURCE_ARCHIVE,
    ImageError,
    ImageSpec,
    build_context,
    context_tar,
    image_name,
    source_archive,
)

COMMIT = "0123456789abcdef0123456789abcdef01234567"
RECIPE = EnvironmentSpec(
    setup_command="set -e\npip install '.[test]'\npython -c 'print(1)'",
    extra_requirements=("hypothesis>=6", "mock"),
    environment=(("SETUPTOOLS_SCM_PRETEND_VERSION", "1.2.3"), ("GREETING", 'say "hi"')),
    image_python="3.12",
)


def parsed(text: str) -> DockerfileParser:
    return DockerfileParser(fileobj=io.BytesIO(text.encode("utf-8")))


def instructions(text: str) -> list[tuple[str, str]]:
    return [
        (item["instruction"], item["value"])
        for item in parsed(text).structure
        if item["instruction"] != "COMMENT"
    ]


def test_it_writes_a_dockerfile_with_the_recipes_python_packages_and_setup_in_the_jails_order():
    image = ImageSpec(environment=RECIPE, python_version="3.12", commit=COMMIT)
    dockerfile = parsed(image.dockerfile)
    assert dockerfile.baseimage == "python:3.12-slim"
    assert dockerfile.labels["org.specloom.commit"] == COMMIT
    assert dockerfile.envs["SETUPTOOLS_SCM_PRETEND_VERSION"] == "1.2.3"
    assert dockerfile.envs["GREETING"] == 'say "hi"'
    steps = instructions(image.dockerfile)
    runs = [value for kind, value in steps if kind == "RUN"]
    # venv, the repository at the commit under git, then the steps of environments._Build.
    venv = runs.index("python -m venv /opt/specloom-env")
    setup = runs.index(next(r for r in runs if r.startswith("[")))
    assert json.loads(runs[setup]) == ["sh", "-c", RECIPE.setup_command]
    install = next(r for r in runs if r.startswith("pip install "))
    assert shlex.split(install)[2:] == [*TOOL_REQUIREMENTS, "hypothesis>=6", "mock"]
    forget = next(r for r in runs if "forget_project.py" in r)
    keep = next(r for r in runs if "keep_generated.py" in r)
    assert venv < setup < runs.index(install) < runs.index(forget) < runs.index(keep)
    assert ("ADD", "source.tar.gz /testbed/") in steps
    assert [value for kind, value in steps if kind == "WORKDIR"][-1] == "/testbed"
    git_step = next(r for r in runs if r.startswith("cd /testbed && git init"))
    assert COMMIT in git_step


def test_every_file_the_dockerfile_copies_is_in_its_build_context(make_snapshot, tmp_path):
    snapshot = make_snapshot({"tests/test_ok.py": "def test_ok():\n    pass\n"})
    image = ImageSpec(environment=RECIPE, python_version="3.12", commit=snapshot.commit)
    files = build_context(snapshot, image, scratch=tmp_path)
    assert tuple(sorted(files)) == tuple(sorted(CONTEXT_FILES))
    copied = []
    for kind, value in instructions(files["Dockerfile"].decode()):
        if kind in ("COPY", "ADD"):
            copied += shlex.split(value)[:-1]
    assert set(copied) <= set(files)
    with tarfile.open(fileobj=io.BytesIO(context_tar(files))) as context:
        assert sorted(context.getnames()) == sorted(CONTEXT_FILES)


def test_the_hash_names_the_image_and_changes_with_commit_recipe_and_python():
    image = ImageSpec(environment=RECIPE, python_version="3.12", commit=COMMIT)
    same = ImageSpec(environment=RECIPE, python_version="3.12", commit=COMMIT)
    assert image.hash == same.hash and len(image.hash) == 32
    others = [
        ImageSpec(environment=RECIPE, python_version="3.12", commit="f" * 40),
        ImageSpec(environment=RECIPE, python_version="3.11", commit=COMMIT),
        ImageSpec(
            environment=EnvironmentSpec(extra_requirements=("mock",)),
            python_version="3.12",
            commit=COMMIT,
        ),
    ]
    assert len({image.hash, *(other.hash for other in others)}) == 4
    assert image.image("ghcr.io/acme/specloom-env") == f"ghcr.io/acme/specloom-env:{image.hash}"
    assert image.image() == f"specloom-env:{image.hash}"


@pytest.mark.parametrize("prefix", ["Upper/Case", "has space", "trailing-", "a//b"])
def test_an_image_prefix_that_is_no_repository_name_is_refused(prefix):
    with pytest.raises(ImageError, match="not a Docker repository name"):
        image_name(prefix, "abc")


@pytest.mark.parametrize(
    ("values", "match"),
    [
        ({"python_version": "three"}, "Python"),
        ({"commit": "main"}, "full commit id"),
        (
            {"environment": EnvironmentSpec(environment=(("A", "two\nlines"),))},
            "line break",
        ),
        (
            {"environment": EnvironmentSpec(extra_requirements=("x\nRUN curl example.com",))},
            "line break",
        ),
    ],
)
def test_what_a_dockerfile_cannot_express_is_refused_with_a_reason(values, match):
    arguments = {"environment": RECIPE, "python_version": "3.12", "commit": COMMIT, **values}
    with pytest.raises(ImageError, match=match):
        ImageSpec(**arguments).dockerfile  # noqa: B018 - rendering is what raises


def test_the_source_archive_is_the_same_bytes_for_the_same_commit(make_snapshot, tmp_path):
    snapshot = make_snapshot(
        {"tool.sh": "#!/bin/sh\necho hi\n", "tests/test_ok.py": "def test_ok():\n    pass\n"}
    )
    first = source_archive(snapshot, scratch=tmp_path)
    second = source_archive(snapshot, scratch=tmp_path)
    assert first == second
    with tarfile.open(fileobj=io.BytesIO(first)) as archive:
        members = {member.name: member for member in archive.getmembers()}
    assert {"pyproject.toml", "src/sampleproj/__init__.py", "tests/test_ok.py"} <= set(members)
    assert all(m.uid == 0 and m.mtime == 0 and m.uname == "" for m in members.values())
    assert list(members) == sorted(members)


def test_a_context_for_another_commit_is_refused(make_snapshot, tmp_path):
    snapshot = make_snapshot({"tests/test_ok.py": "def test_ok():\n    pass\n"})
    image = ImageSpec(environment=RECIPE, python_version="3.12", commit=COMMIT)
    with pytest.raises(ImageError, match="snapshot is at"):
        build_context(snapshot, image, scratch=tmp_path)


def test_the_build_keeps_generated_python_files_and_git_ignores_them(tmp_path):
    build, work = tmp_path / "build", tmp_path / "work"
    for folder in (build, work):
        (folder / "pkg").mkdir(parents=True)
        (folder / "pkg" / "__init__.py").write_text("")
    (work / ".git" / "info").mkdir(parents=True)
    (build / "pkg" / "_version.py").write_text("version = '1.2.3'\n")
    (build / "build" / "lib").mkdir(parents=True)
    (build / "build" / "lib" / "copy.py").write_text("")
    (build / "pkg.egg-info").mkdir()
    (build / "pkg.egg-info" / "x.py").write_text("")
    done = subprocess.run(
        [sys.executable, "-I", str(KEEP_GENERATED), str(build), str(work)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout) == {"kept": ["pkg/_version.py"]}
    assert (work / "pkg" / "_version.py").read_text() == "version = '1.2.3'\n"
    assert (work / ".git" / "info" / "exclude").read_text() == "/pkg/_version.py\n"


def test_the_build_keeps_compiled_extension_modules_where_an_in_place_build_puts_them(tmp_path):
    build, work = tmp_path / "build", tmp_path / "work"
    for folder in (build, work):
        (folder / "pkg").mkdir(parents=True)
        (folder / "pkg" / "__init__.py").write_text("")
    (work / ".git" / "info").mkdir(parents=True)
    # Placed by forget_project.py from the installed copy; the wheel build's own copy under
    # build/ and files of other kinds stay behind.
    (build / "pkg" / "_speedups.abi3.so").write_bytes(b"\x7fELF")
    (build / "build" / "lib.linux-x86_64-cpython-311" / "pkg").mkdir(parents=True)
    (build / "build" / "lib.linux-x86_64-cpython-311" / "pkg" / "_speedups.abi3.so").touch()
    (build / "pkg" / "_speedups.o").touch()
    done = subprocess.run(
        [sys.executable, "-I", str(KEEP_GENERATED), str(build), str(work)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout) == {"kept": ["pkg/_speedups.abi3.so"]}
    assert (work / "pkg" / "_speedups.abi3.so").read_bytes() == b"\x7fELF"
    assert (work / ".git" / "info" / "exclude").read_text() == "/pkg/_speedups.abi3.so\n"


@pytest.mark.parametrize(
    ("tree", "installed", "expected"),
    [
        (["pkg/__init__.py"], "pkg/_x.abi3.so", "pkg/_x.abi3.so"),
        (["src/pkg/__init__.py"], "pkg/sub/_x.abi3.so", "src/pkg/sub/_x.abi3.so"),
        (["mod.py"], "_x.abi3.so", "_x.abi3.so"),
        (["src/mod.py"], "_x.abi3.so", "src/_x.abi3.so"),
    ],
)
def test_an_installed_extension_module_goes_where_an_in_place_build_puts_it(
    tmp_path, tree, installed, expected
):
    for relative in tree:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).touch()
    placed = in_place_folder(tmp_path, PurePosixPath(installed)) / installed
    assert placed.as_posix() == expected


def test_the_source_archive_name_is_what_the_dockerfile_adds():
    assert f"ADD {SOURCE_ARCHIVE} " in ImageSpec(RECIPE, "3.12", COMMIT).dockerfile
