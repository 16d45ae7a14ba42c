"""A release's SWE-bench file with the real `swebench` package (5.0.2): `make_test_spec` accepts
every record, and each record's eval script, run in our process sandbox's jail the way the
harness runs it in its container (tests/support/harness_jail.py), gives a log that swebench's
own parser and `get_eval_report` grade as resolved on the reference patch and as not resolved on
an empty patch. The image itself cannot be built here (no Docker engine): its Dockerfile is
checked in tests/workers/sandbox/test_sandbox_images.py."""

from __future__ import annotations

import json

import pytest

from curation import runtime
from curation.exports.harness import HARNESS_KEYS
from curation.models import Task
from curation.services.releases import release_file_path
from tests.curation.release_helpers import cut
from tests.curation.tasks_fixtures import approved_sample_tasks
from tests.support.harness_jail import run_like_the_harness, write_log
from workers.harness import unreadable_ids
from workers.sandbox.images import ImageSpec, python_version_of

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


@pytest.fixture
def harness_release(repo_storage, sandbox_root, dataset):
    tasks = approved_sample_tasks(dataset)
    return cut(dataset), tasks


def test_every_record_is_a_test_spec_and_its_eval_script_grades_reference_and_empty_patches(
    harness_release, tmp_path
):
    from swebench.harness.grading import get_eval_report
    from swebench.harness.log_parsers import PARSER_REGISTRY
    from swebench.harness.utils import load_swebench_dataset, make_test_spec

    release, _tasks = harness_release
    instances = load_swebench_dataset(str(release_file_path(release, "swebench")))
    assert len(instances) == 2
    backend = runtime.sandbox_backend()
    for instance in instances:
        spec = make_test_spec(instance)
        task = Task.objects.get(instance_id=instance["instance_id"])
        environment = runtime.environment_for(task.repository)
        image = ImageSpec(environment, python_version_of(environment), task.base_commit)
        assert spec.image == f"specloom-env:{image.hash}"
        assert spec.log_parser in PARSER_REGISTRY and spec.eval_type == "pass_and_fail"
        assert spec.FAIL_TO_PASS and not unreadable_ids(spec.FAIL_TO_PASS + spec.PASS_TO_PASS)
        snapshot = runtime.snapshot_for(task.repository, task.base_commit)
        for patch, resolved in ((instance["patch"], True), ("", False)):
            log = run_like_the_harness(
                backend, snapshot, environment, model_patch=patch, eval_script=spec.eval_script
            )
            prediction = {
                "instance_id": spec.instance_id,
                "model_patch": patch,
                "model_name_or_path": "specloom-test",
            }
            report = get_eval_report(spec, prediction, str(write_log(tmp_path, log)), True)
            verdict = report[spec.instance_id]
            assert verdict["resolved"] is resolved, log[-4000:]
            assert verdict["patch_successfully_applied"] is True, log[-4000:]
            tests = verdict["tests_status"]
            if resolved:
                assert sorted(tests["FAIL_TO_PASS"]["success"]) == sorted(spec.FAIL_TO_PASS)
            else:
                assert sorted(tests["FAIL_TO_PASS"]["failure"]) == sorted(spec.FAIL_TO_PASS)
            assert sorted(tests["PASS_TO_PASS"]["success"]) == sorted(spec.PASS_TO_PASS)


def test_the_records_keep_the_swebench_4_shape(harness_release):
    from swebench.types import SWEbenchInstance

    release, _tasks = harness_release
    path = release_file_path(release, "swebench")
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        for key in SWEbenchInstance.__annotations__:
            assert isinstance(row[key], str), key
        assert set(row) == set(SWEbenchInstance.__annotations__) | set(HARNESS_KEYS)
        assert isinstance(json.loads(row["FAIL_TO_PASS"]), list)
