"""The read-only resources: repositories, datasets, evaluations, findings, reviews, jobs."""

import pytest

from curation.models import Finding
from curation.services.releases import release_cut
from tests.curation.api.support import error_of
from tests.curation.release_helpers import evaluated_trajectory, review, reviewed_task
from tests.factories import DatasetFactory, RepositoryFactory, UserFactory
from workers.models import Job
from workers.services import job_enqueue

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(dataset):
    """Two datasets: alice is a member of `core` only."""
    secret = DatasetFactory(name="secret", webhook_url="http://hooks.example/x", webhook_secret="k")
    mine = reviewed_task(dataset=dataset, repository=RepositoryFactory(name="ledger"))
    hidden = reviewed_task(dataset=secret, repository=RepositoryFactory(name="hidden-repo"))
    return {"mine": mine, "hidden": hidden, "secret": secret}


def _ids(response) -> list:
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["results"]]


# --- repositories and datasets -------------------------------------------------------------


def test_reviewers_see_the_repositories_of_their_tasks(token_client, alice, bob, world):
    names = [r["name"] for r in token_client(alice).get("/api/v1/repositories").json()["results"]]
    assert names == ["ledger"]
    assert len(_ids(token_client(bob).get("/api/v1/repositories"))) == 2
    repo = token_client(bob).get("/api/v1/repositories?name=ledger").json()["results"][0]
    assert "source" not in repo  # a git URL may carry credentials
    hidden = world["hidden"].repository_id
    assert token_client(alice).get(f"/api/v1/repositories/{hidden}").status_code == 404


def test_datasets_never_show_the_webhook_secret(token_client, bob, alice, world):
    rows = token_client(bob).get("/api/v1/datasets").json()["results"]
    secret = next(r for r in rows if r["name"] == "secret")
    assert secret["webhook_configured"] is True
    assert "webhook_secret" not in secret and "webhook_url" not in secret
    assert [r["name"] for r in token_client(alice).get("/api/v1/datasets").json()["results"]] == [
        "core"
    ]
    assert token_client(alice).get(f"/api/v1/datasets/{world['secret'].pk}").status_code == 404


@pytest.mark.parametrize("url", ["/api/v1/evaluations", "/api/v1/findings"])
def test_read_only_resources_refuse_writes(token_client, bob, url):
    response = token_client(bob, "write").post(url, {}, format="json")
    assert response.status_code == 405
    assert error_of(response)["code"] == "method_not_allowed"


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/repositories",
        "/api/v1/datasets",
        "/api/v1/evaluations",
        "/api/v1/findings",
        "/api/v1/reviews",
        "/api/v1/jobs",
        "/api/v1/releases",
    ],
)
def test_outsiders_get_403_and_unknown_filters_400(client, carol, token_client, bob, url):
    client.force_login(carol)
    assert client.get(url).status_code == 403
    response = token_client(bob).get(url, {"nonsense": "1"})
    assert response.status_code == 400
    assert error_of(response)["details"]["unknown_parameters"] == ["nonsense"]


# --- evaluations and findings ---------------------------------------------------------------


def test_evaluations_of_visible_tasks_with_spec_results(token_client, alice, world):
    evaluated_trajectory(world["mine"], model="model-a", resolved="full")
    evaluated_trajectory(world["mine"], model="model-b", resolved="none")
    evaluated_trajectory(world["hidden"], model="model-a", resolved="full")
    rows = token_client(alice).get("/api/v1/evaluations").json()["results"]
    assert [(r["model"], r["resolved"]) for r in rows] == [("model-a", "full"), ("model-b", "none")]
    assert rows[1]["spec_satisfied"] == {"S1": True, "S2": False}
    assert rows[0]["instance_id"] == world["mine"].instance_id
    filtered = token_client(alice).get("/api/v1/evaluations?model=model-b&resolved=none")
    assert len(_ids(filtered)) == 1
    assert token_client(alice).get("/api/v1/evaluations?resolved=maybe").status_code == 400


def test_findings_of_visible_tasks(token_client, alice, world):
    Finding.objects.create(task=world["mine"], kind="weak_test", severity="high", message="a")
    Finding.objects.create(task=world["mine"], kind="flaky", severity="low", message="b")
    Finding.objects.create(task=world["hidden"], kind="weak_test", message="c")
    client = token_client(alice)
    assert len(_ids(client.get("/api/v1/findings"))) == 2
    rows = client.get("/api/v1/findings?kind=weak_test&severity=high").json()["results"]
    assert [r["message"] for r in rows] == ["a"]
    hidden = Finding.objects.get(message="c")
    assert client.get(f"/api/v1/findings/{hidden.pk}").status_code == 404


# --- reviews ----------------------------------------------------------------------------------


def test_reviewers_see_their_own_reviews_and_curators_all(token_client, alice, bob, world):
    other = UserFactory(username="dora", roles=["reviewer"])
    world["mine"].dataset.members.add(other)
    mine = review(world["mine"], alice, "approve", comment="fine")
    review(world["mine"], other, "reject", test_validity=3)
    review(world["hidden"], other, "approve")
    assert _ids(token_client(alice).get("/api/v1/reviews")) == [mine.pk]
    rows = token_client(bob).get("/api/v1/reviews").json()["results"]
    assert len(rows) == 3
    assert rows[0]["reviewer"] == "alice" and rows[0]["comment"] == "fine"
    rejects = token_client(bob).get("/api/v1/reviews?decision=reject&reviewer=dora")
    assert len(_ids(rejects)) == 1
    assert token_client(bob, "write").post("/api/v1/reviews", {}, format="json").status_code == 405


# --- jobs -------------------------------------------------------------------------------------


def test_jobs_are_visible_to_their_creator_and_to_curators(token_client, alice, bob, dataset):
    alices = job_enqueue(kind="echo", user=alice)
    bobs = job_enqueue(kind="echo", user=bob)
    assert _ids(token_client(alice).get("/api/v1/jobs")) == [alices.pk]
    assert _ids(token_client(bob).get("/api/v1/jobs")) == [alices.pk, bobs.pk]
    assert token_client(alice).get(f"/api/v1/jobs/{bobs.pk}").status_code == 404
    assert _ids(token_client(bob).get("/api/v1/jobs?kind=echo&status=queued")) == [
        alices.pk,
        bobs.pk,
    ]


def test_a_curator_cancels_a_job(token_client, alice, bob, dataset):
    release = release_cut(dataset=dataset, user=bob)
    url = f"/api/v1/jobs/{release.job_id}/cancel"
    assert token_client(alice, "write").post(url).status_code in (403, 404)
    assert token_client(bob, "read").post(url).status_code == 403
    response = token_client(bob, "write").post(url)
    assert response.status_code == 200
    assert response.json()["status"] == "cancelled"
    again = token_client(bob, "write").post(url)
    assert again.status_code == 409
    assert "already finished" in error_of(again)["message"]
    assert Job.objects.get(pk=release.job_id).status == "cancelled"
    assert token_client(bob, "write").get(url).status_code == 405
