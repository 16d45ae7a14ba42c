"""/api/v1/repositories/{id}/recipe: curators read, edit and re-try a repository's recipe."""

import pytest
from rest_framework.test import APIClient

from curation.models import EnvironmentRecipe
from tests.curation.api.support import error_of
from tests.curation.tasks_fixtures import sample_repository
from workers.models import Job

pytestmark = pytest.mark.django_db


@pytest.fixture
def repository(repo_storage):
    return sample_repository("ledger")


def url(repository, suffix=""):
    return f"/api/v1/repositories/{repository.pk}/recipe{suffix}"


def test_a_curator_reads_the_recipe_of_the_default_commit(token_client, bob, repository):
    response = token_client(bob, "read").get(url(repository))
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["commit"] == repository.default_commit
    assert body["status"] == "pending" and body["revision"] == 1


def test_a_curator_edits_the_recipe_and_a_try_is_queued(token_client, bob, repository):
    client = token_client(bob, "read", "write")
    revision = client.get(url(repository)).json()["revision"]
    response = client.put(
        url(repository),
        {"recipe": {"install": ".[test]", "packages": ["freezegun"]}, "revision": revision},
        format="json",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["source"] == "curator" and body["recipe"]["packages"] == ["freezegun"]
    assert body["revision"] == revision + 1
    assert Job.objects.get(pk=body["job"]).kind == "prepare_environment"


def test_a_stale_edit_answers_409(token_client, bob, repository):
    client = token_client(bob, "read", "write")
    response = client.put(url(repository), {"recipe": {}, "revision": 99}, format="json")
    assert response.status_code == 409
    assert "changed meanwhile" in error_of(response)["message"]


@pytest.mark.parametrize(
    "recipe",
    [
        {"packages": ["x @ file:///etc/shadow"]},
        {"environment": {"HOME": "/"}},
        {"install": "-e /"},
        {"unknown": True},
    ],
)
def test_an_invalid_recipe_answers_400_with_the_field(token_client, bob, repository, recipe):
    client = token_client(bob, "read", "write")
    response = client.put(url(repository), {"recipe": recipe, "revision": 1}, format="json")
    assert response.status_code == 400
    assert "recipe" in error_of(response)["details"]
    assert EnvironmentRecipe.objects.get(repository=repository).source == "inferred"


def test_prepare_queues_a_job(token_client, bob, repository):
    response = token_client(bob, "read", "write").post(url(repository, "/prepare"))
    assert response.status_code == 202
    assert Job.objects.get(pk=response.json()["job"]).kind == "prepare_environment"


def test_reviewers_outsiders_and_read_tokens_are_refused(
    token_client, alice, bob, carol, repository
):
    assert token_client(alice, "read").get(url(repository)).status_code == 403
    carol_client = APIClient()
    carol_client.force_login(carol)  # no role, no token: a session of an outsider
    assert carol_client.get(url(repository)).status_code == 403
    read_only = token_client(bob, "read")
    assert read_only.post(url(repository, "/prepare")).status_code == 403
    assert (
        read_only.put(url(repository), {"recipe": {}, "revision": 1}, format="json").status_code
        == 403
    )


def test_an_unknown_repository_answers_404(token_client, bob):
    response = token_client(bob, "read").get("/api/v1/repositories/999999/recipe")
    assert response.status_code == 404
    error_of(response)


def test_a_recipe_never_prepared_answers_as_pending_with_no_id(token_client, bob):
    # A repository still being imported has no snapshot, so no stored recipe: id and
    # updated_at are null, as the schema says.
    from tests.factories import RepositoryFactory

    repository = RepositoryFactory(status="importing", git_path="", default_commit="")
    response = token_client(bob, "read").get(f"/api/v1/repositories/{repository.pk}/recipe")
    assert response.status_code == 200
    body = response.json()
    assert (body["id"], body["updated_at"], body["status"]) == (None, None, "pending")
