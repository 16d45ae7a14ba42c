"""The pipeline over the API: importing repositories (one, a batch, an archive), their status
table and set-up, synthesis, datasets and their members, retrying jobs."""

import pytest

from curation.models import Dataset, Repository
from tests.curation.api.support import error_of
from tests.curation.repo_sources import project_tar, tar, write_project
from tests.curation.tasks_fixtures import sample_repository
from tests.factories import RepositoryFactory
from workers.models import Job
from workers.services import job_execute

pytestmark = pytest.mark.django_db


class TestImports:
    def test_one_repository_is_queued_and_runs_as_a_job(self, token_client, bob, repo_storage,
                                                        tmp_path):  # fmt: skip
        api = token_client(bob, "write")
        folder = write_project(tmp_path / "lib")
        response = api.post(
            "/api/v1/repositories",
            {"path": str(folder), "commit": "", "setup": {"requirements": ["pytest-cov"]}},
            format="json",
        )
        assert response.status_code == 202, response.json()
        (result,) = response.json()["results"]
        assert result["action"] == "queued" and result["name"] == "lib"
        assert job_execute(job_id=result["job"]) == "succeeded"
        row = api.get(f"/api/v1/repositories/{result['repository']}").json()
        assert row["status"] == "imported"
        assert row["test_files"] == 1
        assert row["extra_requirements"] == ["pytest-cov"]
        assert row["import_job"] == result["job"]
        assert "source" not in row
        again = api.post("/api/v1/repositories", {"path": str(folder)}, format="json")
        assert again.json()["results"][0]["action"] == "exists"

    def test_a_batch_reports_every_item(self, token_client, bob, repo_storage, tmp_path):
        api = token_client(bob, "write")
        items = [
            {"source": "https://example.com/owner/a.git", "commit": "v1"},
            {"url": "file:///etc/passwd"},
            {"path": str(write_project(tmp_path / "b")), "name": "bee"},
        ]
        response = api.post("/api/v1/repositories", {"items": items}, format="json")
        assert response.status_code == 202
        results = response.json()["results"]
        assert [r.get("action") for r in results] == ["queued", None, "queued"]
        assert "is not a git URL this server clones" in results[1]["error"]
        assert {r["name"] for r in results if "name" in r} == {"a", "bee"}
        table = api.get("/api/v1/repositories", {"status": "queued"}).json()["results"]
        assert {row["name"] for row in table} == {"a", "bee"}
        assert all(row["status"] == "queued" and row["import_job"] for row in table)

    def test_an_uploaded_archive_is_imported(self, token_client, bob, repo_storage, tmp_path):
        api = token_client(bob, "write")
        archive = project_tar(tmp_path / "pkg.tar.gz")
        with archive.open("rb") as handle:
            response = api.post(
                "/api/v1/repositories", {"archive": handle, "name": "pkg"}, format="multipart"
            )
        assert response.status_code == 202, response.json()
        (result,) = response.json()["results"]
        assert job_execute(job_id=result["job"]) == "succeeded"
        assert Repository.objects.get(name="pkg").status == "imported"

    def test_an_archive_with_git_metadata_is_refused(self, token_client, bob, repo_storage,
                                                     tmp_path):  # fmt: skip
        archive = tar(tmp_path / "evil.tar.gz", {"x/.git": b"gitdir: /srv/other/.git\n"})
        with archive.open("rb") as handle:
            response = token_client(bob, "write").post(
                "/api/v1/repositories", {"archive": handle}, format="multipart"
            )
        assert response.status_code == 400
        assert "git metadata" in error_of(response)["details"]["archive"][0]
        assert not Repository.objects.exists()

    @pytest.mark.parametrize(
        ("body", "field", "message"),
        [
            ({}, "source", "exactly one of source, url or path"),
            ({"source": "x", "url": "y"}, "source", "exactly one of"),
            ({"url": "ftp://x"}, "source", "is not a git URL this server clones"),
            ({"path": "/definitely/not/here"}, "source", "does not exist on the server"),
            ({"url": 5}, "url", "Not a valid string"),
            ({"items": []}, "items", "at least one"),
            ({"items": [{"url": "ftp://x"}, {}]}, "items", "exactly one of"),
            ({"source": "https://x.org/a\u0000"}, "source", "Null characters are not allowed"),
        ],
    )
    def test_bad_input_gets_the_error_body(self, token_client, bob, repo_storage, body, field,
                                           message):  # fmt: skip
        response = token_client(bob, "write").post("/api/v1/repositories", body, format="json")
        assert response.status_code == 400
        error = error_of(response)
        assert message in str(error["details"][field])
        assert not Repository.objects.exists()

    def test_server_paths_outside_the_allowed_roots_are_refused(self, token_client, bob,
                                                                repo_storage, tmp_path,
                                                                settings):  # fmt: skip
        settings.SPECLOOM_IMPORT_ROOTS = [(tmp_path / "corpora").resolve()]
        response = token_client(bob, "write").post(
            "/api/v1/repositories", {"path": str(write_project(tmp_path / "x"))}, format="json"
        )
        assert response.status_code == 400
        assert "is not inside the folders" in error_of(response)["details"]["source"][0]

    def test_only_curators_with_the_write_scope_import(self, token_client, alice, bob, client,
                                                       carol):  # fmt: skip
        body = {"url": "https://example.com/x.git"}
        assert (
            token_client(bob, "read").post("/api/v1/repositories", body, format="json").status_code
            == 403
        )
        assert (
            token_client(alice, "write")
            .post("/api/v1/repositories", body, format="json")
            .status_code
            == 403
        )
        client.force_login(carol)
        assert (
            client.post("/api/v1/repositories", body, content_type="application/json").status_code
            == 403
        )
        assert not Repository.objects.exists()


class TestSetupAndSynthesis:
    def test_the_setup_is_changed(self, token_client, bob, alice, repo_storage):
        repository = sample_repository("ledger")
        url = f"/api/v1/repositories/{repository.pk}"
        response = token_client(bob, "write").patch(
            url, {"setup_command": "pip install -e .", "extra_requirements": ["freezegun"]},
            format="json",
        )  # fmt: skip
        assert response.status_code == 200
        assert response.json()["setup_command"] == "pip install -e ."
        assert response.json()["extra_requirements"] == ["freezegun"]
        bad = token_client(bob, "write").patch(url, {"extra_requirements": ["-e ."]}, format="json")
        assert bad.status_code == 400
        assert "not a package requirement" in str(error_of(bad)["details"])
        assert token_client(alice, "write").patch(url, {}, format="json").status_code == 403
        assert token_client(bob, "write").put(url, {}, format="json").status_code == 405

    def test_synthesis_is_queued(self, token_client, bob, repo_storage, dataset):
        repository = sample_repository("ledger")
        response = token_client(bob, "write").post(
            f"/api/v1/repositories/{repository.pk}/synthesize",
            {"dataset": "core", "count": 2, "seed": 3},
            format="json",
        )
        assert response.status_code == 202
        job = Job.objects.get(pk=response.json()["job"])
        assert job.kind == "synthesize"
        assert job.params["count"] == 2 and job.params["seed"] == 3

    @pytest.mark.parametrize(
        ("body", "code", "message"),
        [
            ({"dataset": "nope"}, 400, "No dataset named"),
            ({"dataset": "core", "count": 0}, 400, "greater than or equal to 1"),
            ({"dataset": "core", "engine": "magic"}, 400, "is not a valid choice"),
        ],
    )
    def test_bad_synthesis_input(self, token_client, bob, repo_storage, dataset, body, code,
                                 message):  # fmt: skip
        repository = sample_repository("ledger")
        response = token_client(bob, "write").post(
            f"/api/v1/repositories/{repository.pk}/synthesize", body, format="json"
        )
        assert response.status_code == code
        assert message in str(error_of(response))

    def test_a_repository_that_is_not_imported_is_a_409(self, token_client, bob, dataset):
        pending = RepositoryFactory(name="pending", status="queued", git_path="", default_commit="")
        response = token_client(bob, "write").post(
            f"/api/v1/repositories/{pending.pk}/synthesize", {"dataset": "core"}, format="json"
        )
        assert response.status_code == 409
        assert "not imported" in error_of(response)["message"]


class TestDatasets:
    def test_a_dataset_is_created_and_its_policy_changed(self, token_client, bob, alice):
        api = token_client(bob, "write")
        response = api.post(
            "/api/v1/datasets",
            {"name": "two-eyes", "reviews_required": 2, "consensus": "majority"},
            format="json",
        )
        assert response.status_code == 201
        created = response.json()
        assert created["reviews_required"] == 2 and created["consensus"] == "majority"
        changed = api.patch(f"/api/v1/datasets/{created['id']}", {"validation_reruns": 4},
                            format="json")  # fmt: skip
        assert changed.status_code == 200 and changed.json()["validation_reruns"] == 4
        duplicate = api.post("/api/v1/datasets", {"name": "two-eyes"}, format="json")
        assert duplicate.status_code == 409  # the name is taken: a conflict, not a bad request
        assert "already exists" in error_of(duplicate)["message"]
        assert api.post("/api/v1/datasets", {"name": "x", "reviews_required": 0},
                        format="json").status_code == 400  # fmt: skip
        assert token_client(alice, "write").post("/api/v1/datasets", {"name": "mine"},
                                                 format="json").status_code == 403  # fmt: skip
        assert token_client(bob, "read").post("/api/v1/datasets", {"name": "mine"},
                                              format="json").status_code == 403  # fmt: skip

    def test_members_are_listed_added_and_removed(self, token_client, bob, alice, carol, dataset):
        api = token_client(bob, "write")
        url = f"/api/v1/datasets/{dataset.pk}/members"
        assert [m["username"] for m in api.get(url).json()] == ["alice"]
        refused = api.post(url, {"username": "carol"}, format="json")
        assert refused.status_code == 400
        assert "has no role" in str(error_of(refused)["details"])
        added = api.post(url, {"username": "carol", "role": "reviewer"}, format="json")
        assert added.status_code == 201
        assert added.json() == {"id": carol.pk, "username": "carol", "roles": ["reviewer"]}
        assert api.post(url, {"username": "carol", "role": "curator"},
                        format="json").status_code == 400  # fmt: skip
        assert api.delete(f"{url}/{alice.pk}").status_code == 204
        assert api.delete(f"{url}/{alice.pk}").status_code == 404
        assert api.delete(f"{url}/999999999999999999").status_code == 404
        assert [m["username"] for m in api.get(url).json()] == ["carol"]
        assert token_client(alice, "read").get(url).status_code == 403
        assert Dataset.objects.get(pk=dataset.pk).members.count() == 1


def test_a_failed_job_is_retried_over_the_api(token_client, bob, alice):
    failed = Job.objects.create(kind="echo", status="failed", params={"x": 1})
    response = token_client(bob, "write").post(f"/api/v1/jobs/{failed.pk}/retry")
    assert response.status_code == 202
    assert response.json()["status"] == "queued"
    assert token_client(bob, "write").post(f"/api/v1/jobs/{failed.pk}/cancel").status_code == 409
    done = Job.objects.create(kind="echo", status="succeeded")
    assert token_client(bob, "write").post(f"/api/v1/jobs/{done.pk}/retry").status_code == 409
    assert token_client(alice, "write").post(f"/api/v1/jobs/{failed.pk}/retry").status_code == 403


def test_the_new_operations_are_in_the_schema(client, bob):
    client.force_login(bob)
    paths = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()["paths"]
    assert "post" in paths["/api/v1/repositories"]
    assert "patch" in paths["/api/v1/repositories/{id}"]
    assert "post" in paths["/api/v1/repositories/{id}/synthesize"]
    assert {"get", "post"} <= set(paths["/api/v1/datasets/{id}/members"])
    assert "delete" in paths["/api/v1/datasets/{id}/members/{user_id}"]
    assert "post" in paths["/api/v1/jobs/{id}/retry"]
    body = paths["/api/v1/repositories"]["post"]["requestBody"]["content"]
    assert {"application/json", "multipart/form-data"} <= set(body)
