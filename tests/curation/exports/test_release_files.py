"""A release cut from reviewed sample-repository tasks, read back by the tools pipelines use:
the official `swebench` loader and Hugging Face `datasets`."""

import json

import pytest

from curation.models import Task
from curation.services.releases import release_file_path
from tests.curation.release_helpers import cut, evaluated_trajectory, review
from tests.curation.tasks_fixtures import hand_made_task
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

SWEBENCH_KEYS = {
    "repo",
    "instance_id",
    "base_commit",
    "patch",
    "test_patch",
    "problem_statement",
    "hints_text",
    "created_at",
    "version",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
    "environment_setup_commit",
    # What swebench 5's harness runs (curation/exports/harness.py).
    "image",
    "eval_script",
    "log_parser",
    "eval_type",
}


@pytest.fixture
def offline_hf(monkeypatch, tmp_path):
    """Hugging Face libraries must neither reach the network nor write to the home folder."""
    import datasets

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)
    return datasets


@pytest.fixture
def sample_release(repo_storage, dataset):
    reviewer = UserFactory(username="rev", roles=["reviewer"])
    tasks = [
        hand_made_task("ledger_allocation", dataset=dataset),
        hand_made_task("marktext_toc", dataset=dataset),
    ]
    for task in tasks:
        review(task, reviewer, "approve")
    Task.objects.filter(pk__in=[t.pk for t in tasks]).update(status=Task.Status.APPROVED)
    evaluated_trajectory(tasks[0], model="model-a", resolved="full")
    evaluated_trajectory(tasks[0], model="model-b", resolved="none", unsafe=True)
    return cut(dataset, trajectories=True), tasks


def test_the_swebench_loader_reads_the_swebench_export(sample_release, offline_hf):
    from swebench.harness.utils import load_swebench_dataset

    release, tasks = sample_release
    path = release_file_path(release, "swebench")
    instances = load_swebench_dataset(str(path), instance_ids=[t.instance_id for t in tasks])

    assert [i["instance_id"] for i in instances] == [t.instance_id for t in tasks]
    ledger = instances[0]
    assert set(ledger) == SWEBENCH_KEYS
    task = tasks[0]
    # A sample repository imported from a folder: no upstream URL, so specloom/<name>.
    assert ledger["repo"] == "specloom/ledger"
    assert ledger["base_commit"] == task.base_commit
    # The environment is built from the repository's snapshot, not from each task's base.
    assert ledger["environment_setup_commit"] == task.repository.default_commit
    assert ledger["environment_setup_commit"] != task.base_commit
    assert ledger["version"].startswith("env-")
    assert ledger["patch"] == task.reference_patch
    assert ledger["test_patch"] == task.test_patch
    fail_to_pass = json.loads(ledger["FAIL_TO_PASS"])
    f2p_tests = task.tests.filter(intended_role="FAIL_TO_PASS").order_by("id")
    stored = list(f2p_tests.values_list("nodeid", flat=True))
    # The parametrised ids with spaces, brackets and escaped unicode survive byte for byte.
    assert fail_to_pass == stored
    assert any("n\\xe9gatif \\u22121" in nodeid for nodeid in fail_to_pass)
    assert json.loads(ledger["PASS_TO_PASS"])


def test_the_swebench_loader_reads_the_parquet_export(sample_release, offline_hf):
    from swebench.harness.utils import load_swebench_dataset

    release, tasks = sample_release
    instances = load_swebench_dataset(str(release_file_path(release, "parquet")))
    assert [i["instance_id"] for i in instances] == [t.instance_id for t in tasks]
    assert json.loads(instances[1]["FAIL_TO_PASS"]) == list(
        tasks[1].tests.filter(intended_role="FAIL_TO_PASS").values_list("nodeid", flat=True)
    )


def test_hugging_face_datasets_loads_the_jsonl_and_parquet_exports(
    sample_release, offline_hf, tmp_path
):
    release, tasks = sample_release
    cache = str(tmp_path / "hf-load")
    swebench = offline_hf.load_dataset(
        "json",
        data_files=str(release_file_path(release, "swebench")),
        split="train",
        cache_dir=cache,
    )
    assert swebench.num_rows == 2
    assert set(swebench.column_names) == SWEBENCH_KEYS
    assert swebench[0]["instance_id"] == tasks[0].instance_id

    parquet = offline_hf.load_dataset(
        "parquet",
        data_files=str(release_file_path(release, "parquet")),
        split="train",
        cache_dir=cache,
    )
    assert parquet.num_rows == 2
    row = parquet[0]
    assert row["instance_id"] == tasks[0].instance_id
    assert [s["key"] for s in row["specs"]] == ["S1", "S2", "S3", "S4"]
    assert {(d["from"], d["to"]) for d in row["dependencies"]} >= {("S1", "S4"), ("S2", "S4")}
    assert row["tests"][0]["specs"] == ["S1", "S4"]
    assert row["content_sha256"] == release.manifest[0]["content_sha256"]


def test_the_specloom_export_holds_the_graph_roles_patches_and_safe_trajectories(sample_release):
    release, tasks = sample_release
    lines = release_file_path(release, "specloom").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    ledger = records[0]
    assert ledger["instance_id"] == tasks[0].instance_id
    assert ledger["reference_patch"] == tasks[0].reference_patch
    assert ledger["test_patch"] == tasks[0].test_patch
    assert {s["kind"] for s in ledger["specs"]} == {"functional", "error-handling", "interface"}
    assert {(d["from"], d["to"], d["relation"]) for d in ledger["dependencies"]} == {
        ("S1", "S4", "uses"),
        ("S2", "S4", "constrains"),
    }
    assert {t["intended_role"] for t in ledger["tests"]} == {"FAIL_TO_PASS", "PASS_TO_PASS"}
    # The unsafe trajectory is left out, and the datasheet says so.
    assert [t["model_name"] for t in ledger["trajectories"]] == ["model-a"]
    assert ledger["trajectories"][0]["evaluation"]["resolved"] == "full"
    assert release.datasheet["trajectories"]["unsafe_left_out"] == 1
    assert records[1]["trajectories"] == []
