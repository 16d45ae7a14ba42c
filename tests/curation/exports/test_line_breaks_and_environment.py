"""Every JSON line an export writes is one line for any line splitter, and SWE-bench records
name their repository, environment version and environment commit as the harness expects."""

import json

import pyarrow.parquet as pq
import pytest

from curation.exports.formats import escape_line_breaks, specloom_line, swebench_line
from curation.exports.records import (
    environment_setup_commit,
    environment_version,
    task_records,
    upstream_name,
)
from curation.models import Specification, Task, TestCase
from curation.services.releases import release_file_path
from tests.curation.release_helpers import cut, evaluated_trajectory, reviewed_task
from tests.factories import RepositoryFactory

pytestmark = pytest.mark.django_db

# Every character `str.splitlines()` breaks a line at, JSON's escaped ones included.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
ODD = f"before{LINE_BREAKS}after \u2028 and \u2029 and \x85."


def _odd_task(dataset, **repository):
    task = reviewed_task(dataset=dataset, repository=RepositoryFactory(**repository))
    Task.objects.filter(pk=task.pk).update(
        problem_statement=ODD, title=f"title {ODD}", reference_patch=f"+{ODD}\n"
    )
    Specification.objects.filter(task=task, key="S1").update(statement=ODD, rationale=ODD)
    TestCase.objects.filter(task=task, role="PASS_TO_PASS").update(nodeid=f"tests/t.py::t[{ODD}]")
    return Task.objects.get(pk=task.pk)


@pytest.fixture
def odd_release(dataset, tmp_path, settings):
    settings.SPECLOOM_RELEASE_ROOT = tmp_path / "releases"
    tasks = [_odd_task(dataset), _odd_task(dataset)]
    evaluated_trajectory(tasks[0], model="m", resolved="full")
    return cut(dataset, trajectories=True), tasks


def test_escaping_keeps_the_json_value():
    encoded = json.dumps({"a": ODD}, ensure_ascii=False).encode()
    escaped = escape_line_breaks(encoded)
    assert json.loads(escaped) == {"a": ODD}
    assert len(escaped.decode().splitlines()) == 1


@pytest.mark.parametrize("fmt", ["specloom", "swebench"])
def test_every_release_line_survives_splitlines(odd_release, fmt):
    release, tasks = odd_release
    text = release_file_path(release, fmt).read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) == len(tasks)
    records = [json.loads(line) for line in lines]
    assert records[0]["problem_statement"] == ODD
    if fmt == "specloom":
        assert records[0]["specs"][0]["statement"] == ODD
        assert records[0]["title"] == f"title {ODD}"
        assert records[0]["trajectories"][0]["model_name"] == "m"
    else:
        assert json.loads(records[0]["PASS_TO_PASS"]) == [f"tests/t.py::t[{ODD}]"]


def test_the_parquet_file_keeps_the_characters(odd_release):
    release, _tasks = odd_release
    table = pq.read_table(release_file_path(release, "parquet")).to_pylist()
    assert table[0]["problem_statement"] == ODD


def test_the_official_loaders_read_the_odd_characters(odd_release, tmp_path, monkeypatch):
    import datasets
    from swebench.harness.utils import load_swebench_dataset

    release, tasks = odd_release
    path = str(release_file_path(release, "swebench"))
    instances = load_swebench_dataset(path)
    assert [i["problem_statement"] for i in instances] == [ODD, ODD]
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)
    for fmt in ("swebench", "specloom"):
        loaded = datasets.load_dataset(
            "json",
            data_files=str(release_file_path(release, fmt)),
            split="train",
            cache_dir=str(tmp_path / f"hf-{fmt}"),
        )
        assert loaded.num_rows == len(tasks)
        assert loaded[0]["problem_statement"] == ODD


@pytest.mark.parametrize(
    ("source_kind", "source", "upstream", "expected"),
    [
        ("git", "https://github.com/psf/requests.git", "", "psf/requests"),
        ("git", "git@github.com:pallets/click.git", "", "pallets/click"),
        ("git", "https://ci:secret@gitlab.com/group/sub/tool", "", "sub/tool"),
        ("git", "https://git.example.org/x/y.git", "", "specloom/lib"),
        ("path", "/srv/checkouts/lib", "", "specloom/lib"),
        ("git", "https://github.com/psf/requests.git", "mirror/requests", "mirror/requests"),
    ],
)
def test_the_swebench_repo_is_owner_and_name(source_kind, source, upstream, expected):
    repository = RepositoryFactory(
        name="lib", source_kind=source_kind, source=source, upstream=upstream
    )
    assert upstream_name(repository) == expected


def test_the_version_names_the_environment_and_can_be_set():
    one = RepositoryFactory(setup_command="pip install .", environment={"requirements": ["a"]})
    same = RepositoryFactory(setup_command="pip install .", environment={"requirements": ["a"]})
    other = RepositoryFactory(setup_command="pip install -e .")
    assert environment_version(one) == environment_version(same)
    assert environment_version(one).startswith("env-") and len(environment_version(one)) == 16
    assert environment_version(one) != environment_version(other)
    pinned = RepositoryFactory(environment_version="3.2")
    assert environment_version(pinned) == "3.2"


def test_swebench_records_carry_the_repositorys_environment(dataset):
    repository = RepositoryFactory(
        source_kind="git",
        source="https://github.com/acme/ledger.git",
        default_commit="a" * 40,
        environment_version="1.4",
    )
    task = reviewed_task(dataset=dataset, repository=repository)
    Task.objects.filter(pk=task.pk).update(base_commit="b" * 40)
    (record,) = task_records(Task.objects.filter(pk=task.pk))
    row = json.loads(swebench_line(record))
    assert (row["repo"], row["version"], row["environment_setup_commit"]) == (
        "acme/ledger",
        "1.4",
        environment_setup_commit(repository),
    )
    assert row["environment_setup_commit"] == "a" * 40 != row["base_commit"]
    # The specloom line says the same beside the task's content.
    line = json.loads(specloom_line(record))
    assert (line["upstream"], line["version"]) == ("acme/ledger", "1.4")
    assert line["repo"] == repository.name


def test_the_version_follows_the_environment_recipe(db):
    from curation.exports.records import environment_setup_commit, environment_version
    from curation.models import EnvironmentRecipe
    from tests.factories import RepositoryFactory

    repository = RepositoryFactory(name="withrecipe", default_commit="a" * 40)
    before = environment_version(repository)
    row = EnvironmentRecipe.objects.create(
        repository=repository,
        commit=repository.default_commit,
        recipe={"install": ".[test]", "packages": ["freezegun"], "notes": ["why"]},
    )
    with_recipe = environment_version(repository)
    assert with_recipe.startswith("env-") and with_recipe != before
    row.recipe = {**row.recipe, "notes": ["another reason"]}
    row.save()
    assert environment_version(repository) == with_recipe  # notes are not the environment
    row.recipe = {**row.recipe, "packages": ["freezegun", "pytest-mock"]}
    row.save()
    assert environment_version(repository) != with_recipe
    assert environment_setup_commit(repository) == "a" * 40
