"""manage.py cut_release and release_diff."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from curation.models import Release, Task
from tests.curation.release_helpers import reviewed_task
from workers.models import Job

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def release_root(settings, tmp_path):
    settings.SPECLOOM_RELEASE_ROOT = tmp_path / "releases"


def _run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_it_cuts_a_release_as_a_job(dataset):
    reviewed_task(dataset=dataset)
    output = _run("cut_release", "core", "--version", "2026.1")
    release = Release.objects.get(version="2026.1")
    assert release.status == "ready"
    assert Job.objects.get(pk=release.job_id).status == "succeeded"
    assert "core 2026.1 is ready: 1 tasks" in output
    for meta in release.files.values():
        assert meta["sha256"] in output


def test_it_says_what_is_wrong(dataset):
    with pytest.raises(CommandError, match="no dataset 'nope'"):
        _run("cut_release", "nope")
    reviewed_task(dataset=dataset)
    _run("cut_release", "core")
    with pytest.raises(CommandError, match="already has a release v1"):
        _run("cut_release", "core", "--version", "v1")
    with pytest.raises(CommandError, match="include_unsafe only"):
        _run("cut_release", "core", "--include-unsafe")


def test_release_diff_lists_what_changed(dataset):
    kept, edited = reviewed_task(dataset=dataset), reviewed_task(dataset=dataset)
    _run("cut_release", "core")
    Task.objects.filter(pk=edited.pk).update(revision=3, title="Sharper")
    added = reviewed_task(dataset=dataset)
    _run("cut_release", "core")

    output = _run("release_diff", "core", "v1", "v2")
    assert "1 added, 0 removed, 1 changed, 1 unchanged" in output
    assert f"+ {added.instance_id}" in output
    assert f"~ {edited.instance_id} r1 -> r3" in output
    diff = json.loads(_run("release_diff", "core", "v1", "v2", "--json"))
    assert diff["added"] == [added.instance_id]
    assert kept.instance_id not in output
    with pytest.raises(CommandError, match="no release 'v7'"):
        _run("release_diff", "core", "v1", "v7")
