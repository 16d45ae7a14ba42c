"""/api/v1/releases: cut as a job, read, download (ranges, checksums), diff; never change."""

import base64
import hashlib

import pytest

from curation.models import Release
from curation.services.releases import release_file_path
from tests.curation.api.support import error_of
from tests.curation.release_helpers import cut, reviewed_task
from tests.factories import DatasetFactory
from workers.models import Job
from workers.services import job_execute

pytestmark = pytest.mark.django_db


@pytest.fixture
def release(dataset):
    reviewed_task(dataset=dataset)
    reviewed_task(dataset=dataset)
    return cut(dataset)


def _body(response) -> bytes:
    if response.streaming:
        return b"".join(response.streaming_content)
    return response.content


def test_a_curator_cuts_a_release_with_a_release_token(token_client, bob, dataset):
    reviewed_task(dataset=dataset)
    client = token_client(bob, "release")
    response = client.post("/api/v1/releases", {"dataset": "core"}, format="json")
    assert response.status_code == 202, response.json()
    body = response.json()
    assert body["status"] == "building" and body["version"] == "v1"
    assert Job.objects.get(pk=body["job"]).kind == "cut_release"

    assert job_execute(job_id=body["job"]) == "succeeded"
    ready = client.get(f"/api/v1/releases/{body['id']}").json()
    assert ready["status"] == "ready"
    assert ready["tasks"] == 1
    assert set(ready["files"]) == {"specloom", "swebench", "parquet"}
    assert ready["manifest"][0]["content_sha256"] == ready["manifest"][0]["content_sha256"]
    assert ready["created_by"] == "bob"
    job = client.get(f"/api/v1/jobs/{body['job']}").json()
    assert job["status"] == "succeeded" and job["progress"] == 100


def test_cutting_needs_the_curator_role_and_the_release_scope(token_client, alice, bob, dataset):
    for client in (token_client(alice, "write"), token_client(bob, "write")):
        response = client.post("/api/v1/releases", {"dataset": "core"}, format="json")
        assert response.status_code == 403
        assert error_of(response)["code"] == "permission_denied"
    assert not Release.objects.exists()


def test_bad_cut_input_is_a_clear_error(token_client, bob, release):
    client = token_client(bob, "release")
    # A dataset you cannot see (or that does not exist) is a 404, as everywhere.
    response = client.post("/api/v1/releases", {"dataset": "nope"}, format="json")
    assert response.status_code == 404
    assert "No dataset named 'nope'" in error_of(response)["message"]
    response = client.post("/api/v1/releases", {"dataset": "core", "version": "v1"}, format="json")
    assert response.status_code == 409
    assert "already has a release v1" in error_of(response)["message"]
    response = client.post("/api/v1/releases", {"trajectories": "perhaps"}, format="json")
    assert set(error_of(response)["details"]) == {"dataset", "trajectories"}
    # A JSON boolean is true or false: not 0, 1 or "yes" (which a form field would take).
    for value in (0, 1, "true", "yes"):
        body = {"dataset": "core", "trajectories": value, "include_unsafe": value}
        response = client.post("/api/v1/releases", body, format="json")
        assert response.status_code == 400, value
        assert set(error_of(response)["details"]) == {"trajectories", "include_unsafe"}


def test_a_release_cannot_be_changed_through_the_api(token_client, bob, release):
    client = token_client(bob, "release")
    before = Release.objects.get(pk=release.pk)
    for method in ("put", "patch"):
        response = getattr(client, method)(
            f"/api/v1/releases/{release.pk}", {"version": "v9"}, format="json"
        )
        assert response.status_code == 405, method
        assert error_of(response)["code"] == "method_not_allowed"
    response = client.delete(f"/api/v1/releases/{release.pk}")
    assert response.status_code == 409
    assert "never" in error_of(response)["message"]
    after = Release.objects.get(pk=release.pk)
    assert (after.version, after.manifest, after.files, after.datasheet) == (
        before.version,
        before.manifest,
        before.files,
        before.datasheet,
    )


def test_a_failed_release_can_be_deleted(token_client, bob, dataset):
    release = Release.objects.create(dataset=dataset, version="v1", status="failed")
    assert token_client(bob, "read").delete(f"/api/v1/releases/{release.pk}").status_code == 403
    response = token_client(bob, "release").delete(f"/api/v1/releases/{release.pk}")
    assert response.status_code == 204
    assert not Release.objects.exists()


def test_reviewers_see_releases_of_their_datasets_only(token_client, alice, carol, client, release):
    other = DatasetFactory(name="secret")
    reviewed_task(dataset=other)
    hidden = cut(other)
    reader = token_client(alice)
    assert [r["id"] for r in reader.get("/api/v1/releases").json()["results"]] == [release.pk]
    assert reader.get(f"/api/v1/releases/{hidden.pk}").status_code == 404
    assert reader.get(f"/api/v1/releases/{hidden.pk}/export").status_code == 404
    assert reader.get(f"/api/v1/releases/{hidden.pk}/datasheet").status_code == 404
    client.force_login(carol)
    assert client.get(f"/api/v1/releases/{release.pk}/export").status_code == 403


def test_it_filters_releases(token_client, bob, release):
    client = token_client(bob)
    assert len(client.get("/api/v1/releases?dataset=core&status=ready").json()["results"]) == 1
    # A dataset that does not exist (or that you cannot see) is a 404, as everywhere.
    assert client.get("/api/v1/releases?dataset=other").status_code == 404
    assert client.get("/api/v1/releases?colour=blue").status_code == 400


# --- Downloads ----------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["specloom", "swebench", "parquet"])
def test_it_serves_the_stored_file_with_its_checksum(token_client, alice, release, fmt):
    response = token_client(alice).get(f"/api/v1/releases/{release.pk}/export?format={fmt}")
    assert response.status_code == 200
    body = _body(response)
    sha = hashlib.sha256(body).hexdigest()
    assert sha == release.files[fmt]["sha256"]
    assert body == release_file_path(release, fmt).read_bytes()
    assert response["X-Checksum-Sha256"] == sha
    assert response["ETag"] == f'"{sha}"'
    assert response["Repr-Digest"] == f"sha-256=:{base64.b64encode(bytes.fromhex(sha)).decode()}:"
    assert response["Accept-Ranges"] == "bytes"
    assert int(response["Content-Length"]) == len(body)
    assert release.files[fmt]["filename"] in response["Content-Disposition"]


def test_the_same_release_always_exports_the_same_bytes(token_client, alice, bob, release):
    url = f"/api/v1/releases/{release.pk}/export?format=parquet"
    first = _body(token_client(alice).get(url))
    second = _body(token_client(bob).get(url))
    assert first == second


def test_it_serves_byte_ranges(token_client, alice, release):
    client = token_client(alice)
    url = f"/api/v1/releases/{release.pk}/export?format=specloom"
    whole = release_file_path(release, "specloom").read_bytes()
    size = len(whole)

    response = client.get(url, HTTP_RANGE="bytes=10-29")
    assert response.status_code == 206
    assert _body(response) == whole[10:30]
    assert response["Content-Range"] == f"bytes 10-29/{size}"
    assert response["Content-Length"] == "20"
    assert response["X-Checksum-Sha256"] == release.files["specloom"]["sha256"]

    response = client.get(url, HTTP_RANGE="bytes=-5")
    assert _body(response) == whole[-5:]
    response = client.get(url, HTTP_RANGE=f"bytes={size - 3}-")
    assert _body(response) == whole[-3:]
    response = client.get(url, HTTP_RANGE=f"bytes=0-{size * 2}")
    assert response.status_code == 206 and _body(response) == whole


def test_a_range_outside_the_file_is_a_416(token_client, alice, release):
    size = release.files["specloom"]["bytes"]
    response = token_client(alice).get(
        f"/api/v1/releases/{release.pk}/export", HTTP_RANGE=f"bytes={size}-"
    )
    assert response.status_code == 416
    assert response["Content-Range"] == f"bytes */{size}"
    assert error_of(response)["code"] == "range_not_satisfiable"


def test_a_malformed_or_multiple_range_gets_the_whole_file(token_client, alice, release):
    client = token_client(alice)
    url = f"/api/v1/releases/{release.pk}/export"
    for header in ("bytes=a-b", "bytes=0-1,4-5", "items=0-3", "bytes=9-2"):
        response = client.get(url, HTTP_RANGE=header)
        assert response.status_code == 200, header
        assert hashlib.sha256(_body(response)).hexdigest() == release.files["specloom"]["sha256"]


def test_if_range_resumes_only_the_same_file(token_client, alice, release):
    client = token_client(alice)
    url = f"/api/v1/releases/{release.pk}/export"
    etag = f'"{release.files["specloom"]["sha256"]}"'
    assert client.get(url, HTTP_RANGE="bytes=0-9", HTTP_IF_RANGE=etag).status_code == 206
    stale = client.get(url, HTTP_RANGE="bytes=0-9", HTTP_IF_RANGE='"0000"')
    assert stale.status_code == 200
    assert client.get(url, HTTP_IF_NONE_MATCH=etag).status_code == 304


def test_head_gives_the_headers_without_the_body(token_client, alice, release):
    response = token_client(alice).head(f"/api/v1/releases/{release.pk}/export?format=swebench")
    assert response.status_code == 200
    assert _body(response) == b""
    assert response["Content-Length"] == str(release.files["swebench"]["bytes"])
    assert response["X-Checksum-Sha256"] == release.files["swebench"]["sha256"]


def test_a_download_needs_a_known_format_and_a_ready_release(token_client, bob, dataset, release):
    client = token_client(bob)
    response = client.get(f"/api/v1/releases/{release.pk}/export?format=csv")
    assert response.status_code == 400
    assert "format" in error_of(response)["details"]
    building = Release.objects.create(dataset=dataset, version="v2")
    response = client.get(f"/api/v1/releases/{building.pk}/export")
    assert response.status_code == 409
    assert "building" in error_of(response)["message"]
    writer = token_client(bob, "release")
    assert writer.post(f"/api/v1/releases/{release.pk}/export").status_code == 405


def test_the_file_accepts_any_accept_header(token_client, alice, release):
    response = token_client(alice).get(
        f"/api/v1/releases/{release.pk}/export?format=parquet",
        HTTP_ACCEPT="application/vnd.apache.parquet",
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "application/vnd.apache.parquet"


# --- Datasheet and diff -------------------------------------------------------------------------


def test_the_datasheet_is_served_as_json(token_client, alice, release):
    response = token_client(alice).get(f"/api/v1/releases/{release.pk}/datasheet")
    assert response.status_code == 200
    sheet = response.json()
    assert sheet == release.datasheet
    assert {"by_origin", "by_repository", "by_spec_kind", "by_difficulty"} <= set(sheet)
    assert {"review", "agreement", "models", "trajectories"} <= set(sheet)


def test_it_diffs_two_releases(token_client, bob, dataset, release):
    added = reviewed_task(dataset=dataset)
    newer = cut(dataset)
    client = token_client(bob)
    response = client.get(f"/api/v1/releases/{newer.pk}/diff?against={release.pk}")
    assert response.status_code == 200
    diff = response.json()
    assert diff["added"] == [added.instance_id]
    assert diff["removed"] == [] and diff["changed"] == [] and diff["unchanged"] == 2
    assert diff["from"]["version"] == "v1" and diff["to"]["version"] == "v2"


def test_a_diff_needs_a_visible_ready_release_to_compare_with(
    token_client, alice, bob, dataset, release
):
    client = token_client(bob)
    response = client.get(f"/api/v1/releases/{release.pk}/diff")
    assert response.status_code == 400
    assert "against" in error_of(response)["details"]
    assert client.get(f"/api/v1/releases/{release.pk}/diff?against=x").status_code == 400
    assert client.get(f"/api/v1/releases/{release.pk}/diff?against=999999").status_code == 404
    other = DatasetFactory(name="secret")
    reviewed_task(dataset=other)
    hidden = cut(other)
    response = token_client(alice).get(f"/api/v1/releases/{release.pk}/diff?against={hidden.pk}")
    assert response.status_code == 404


def test_a_building_release_cannot_be_deleted_and_its_cut_goes_on(token_client, bob, dataset):
    reviewed_task(dataset=dataset)
    client = token_client(bob, "release")
    body = client.post("/api/v1/releases", {"dataset": "core"}, format="json").json()
    response = client.delete(f"/api/v1/releases/{body['id']}")
    assert response.status_code == 409
    error = error_of(response)
    assert error["code"] == "conflict"
    assert "still being cut" in error["message"]
    assert job_execute(job_id=body["job"]) == "succeeded"
    assert Release.objects.get(pk=body["id"]).status == "ready"


def test_a_stale_delete_of_a_release_that_became_ready_is_refused(bob, dataset):
    from curation.models import ReleaseImmutable
    from curation.services.releases import release_cut, release_delete

    reviewed_task(dataset=dataset)
    release = release_cut(dataset=dataset, user=bob)
    stale = Release.objects.get(pk=release.pk)
    stale.status = "failed"  # what a reader saw a moment before the worker froze it
    assert job_execute(job_id=release.job_id) == "succeeded"
    with pytest.raises(ReleaseImmutable):
        release_delete(release=stale)
    assert Release.objects.get(pk=release.pk).status == "ready"


def test_a_release_whose_cut_was_cancelled_can_be_deleted(token_client, bob, dataset):
    from workers.services import job_cancel

    reviewed_task(dataset=dataset)
    client = token_client(bob, "release")
    body = client.post("/api/v1/releases", {"dataset": "core"}, format="json").json()
    assert job_cancel(job=Job.objects.get(pk=body["job"]))
    assert client.delete(f"/api/v1/releases/{body['id']}").status_code == 204
    assert not Release.objects.filter(pk=body["id"]).exists()


def test_a_version_name_is_never_handed_out_twice(token_client, bob, dataset):
    from curation.services.releases import release_cut

    reviewed_task(dataset=dataset)
    client = token_client(bob, "release")
    first = client.post("/api/v1/releases", {"dataset": "core"}, format="json").json()
    assert first["version"] == "v1"
    release = Release.objects.get(pk=first["id"])
    Release.objects.filter(pk=release.pk).update(status="failed")
    assert client.delete(f"/api/v1/releases/{first['id']}").status_code == 204
    # The job of the deleted release still runs: it finds nothing to build and says so.
    assert job_execute(job_id=first["job"]) == "succeeded"
    assert "no longer exists" in Job.objects.get(pk=first["job"]).message
    second = release_cut(dataset=dataset, user=bob)
    assert second.version == "v2"
    assert job_execute(job_id=second.job_id) == "succeeded"
    assert Release.objects.get(pk=second.pk).status == "ready"


def test_the_schema_documents_the_409s_of_releases(token_client, alice):
    schema = token_client(alice).get("/api/schema/", HTTP_ACCEPT="application/json").json()
    paths = schema["paths"]
    assert "409" in paths["/api/v1/releases/{id}"]["delete"]["responses"]
    for path in ("datasheet", "export", "diff"):
        assert "409" in paths[f"/api/v1/releases/{{id}}/{path}"]["get"]["responses"], path


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"dataset": "core", "version": "v 2"}, "version"),
        ({"dataset": "core", "version": "v2\n"}, "version"),
        ({"dataset": "core", "include_unsafe": True}, "include_unsafe"),
        ({"dataset": "core", "include_unsafe": True, "trajectories": False}, "include_unsafe"),
    ],
)
def test_a_cut_the_schema_calls_invalid_is_a_400(token_client, bob, dataset, body, field):
    response = token_client(bob, "release").post("/api/v1/releases", body, format="json")
    assert response.status_code == 400
    assert field in error_of(response)["details"]


def test_the_schema_says_include_unsafe_needs_trajectories(token_client, alice):
    schema = token_client(alice).get("/api/schema/", HTTP_ACCEPT="application/json").json()
    cut = schema["components"]["schemas"]["ReleaseCutRequest"]
    assert {"required": ["trajectories"], "properties": {"trajectories": {"enum": [True]}}} in (
        cut["anyOf"]
    )


def test_json_bodies_keep_their_types(token_client, bob, release, dataset):
    # DRF would turn 0 into "0" and "3" into 3; a JSON body's values must have the schema's types.
    client = token_client(bob, "read", "write", "release")
    response = client.post("/api/v1/releases", {"dataset": "core", "version": 0}, format="json")
    assert response.status_code == 400
    assert error_of(response)["details"] == {"version": ["Not a valid string."]}
    response = client.post("/api/v1/datasets", {"name": 7}, format="json")
    assert response.status_code == 400
    assert "name" in error_of(response)["details"]
