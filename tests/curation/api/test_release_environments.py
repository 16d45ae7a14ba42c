"""A release ships the build context of every task's environment image under
`environments/<hash>/`, names it in the manifest, and serves its files over the API."""

from __future__ import annotations

import hashlib
import io

import pytest
from django.conf import settings
from dockerfile_parse import DockerfileParser

from curation.models import Task
from tests.curation.api.support import error_of
from tests.curation.release_helpers import cut
from tests.curation.tasks_fixtures import approved_sample_tasks
from workers.sandbox.images import CONTEXT_FILES

pytestmark = pytest.mark.django_db


@pytest.fixture
def release(repo_storage, dataset):
    approved_sample_tasks(dataset)
    return cut(dataset)


def test_the_release_ships_each_environment_and_names_it_in_the_manifest(release):
    sheet = release.datasheet["environments"]
    assert len(sheet) == 2 and len(release.manifest) == 2
    for entry in release.manifest:
        key = entry["environment"]
        assert entry["image"] == f"specloom-env:{key}"
        files = sheet[key]["files"]
        assert sorted(files) == sorted(CONTEXT_FILES) and sheet[key]["tasks"] == 1
        for name, meta in files.items():
            data = (settings.SPECLOOM_RELEASE_ROOT / meta["path"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == meta["sha256"], name
        dockerfile = (settings.SPECLOOM_RELEASE_ROOT / files["Dockerfile"]["path"]).read_bytes()
        assert hashlib.sha256(dockerfile).hexdigest()[:32] == key
        parsed = DockerfileParser(fileobj=io.BytesIO(dockerfile))
        task = Task.objects.get(pk=entry["task_id"])
        assert parsed.labels["org.specloom.commit"] == task.base_commit
        assert parsed.baseimage.startswith("python:3.")


def test_a_second_cut_ships_the_very_same_bytes(release, dataset):
    Task.objects.filter(dataset=dataset).update(status=Task.Status.APPROVED)
    again = cut(dataset, version="again")
    assert again.datasheet["environments"] == {
        key: {
            **entry,
            "files": {
                name: {**meta, "path": meta["path"].replace(f"/{release.version}/", "/again/")}
                for name, meta in entry["files"].items()
            },
        }
        for key, entry in release.datasheet["environments"].items()
    }


def test_it_serves_an_environment_file_with_its_checksum(release, alice, token_client):
    entry = release.manifest[0]
    meta = release.datasheet["environments"][entry["environment"]]["files"]["Dockerfile"]
    response = token_client(alice, "read").get(
        f"/api/v1/releases/{release.pk}/environments/{entry['environment']}/Dockerfile"
    )
    assert response.status_code == 200
    body = b"".join(response.streaming_content)
    assert hashlib.sha256(body).hexdigest() == meta["sha256"] == response["X-Checksum-Sha256"]


@pytest.mark.parametrize(
    "path", ["environments/{key}/nope.txt", "environments/0000/Dockerfile", "environments/{key}/"]
)
def test_an_unknown_environment_file_is_a_404_error_body(release, alice, token_client, path):
    key = release.manifest[0]["environment"]
    response = token_client(alice, "read").get(
        f"/api/v1/releases/{release.pk}/" + path.format(key=key)
    )
    assert response.status_code == 404
    error_of(response)


def test_an_outsider_cannot_read_environment_files(release, carol, bob, token_client, client):
    key = release.manifest[0]["environment"]
    url = f"/api/v1/releases/{release.pk}/environments/{key}/Dockerfile"
    client.force_login(carol)
    assert client.get(url).status_code == 403
    assert token_client(bob, "release").post(url).status_code == 405


def test_the_release_page_lists_the_environment_images(release, bob, client):
    client.force_login(bob)
    page = client.get(f"/releases/{release.pk}/").content.decode()
    entry = release.manifest[0]
    assert entry["image"] in page
    assert f"/environments/{entry['environment']}/Dockerfile" in page
