"""Every curator page: curators only, the right methods only."""

import pytest

from tests.factories import RepositoryFactory
from workers.models import Job

pytestmark = pytest.mark.django_db

LIST_PAGES = ["/repositories/", "/synthesize/", "/datasets/", "/trajectories/", "/jobs/"]
POSTS = ["/repositories/import", "/datasets/new"]


@pytest.fixture
def objects(dataset):
    repository = RepositoryFactory(name="lib")
    job = Job.objects.create(kind="echo")
    return {"repository": repository, "dataset": dataset, "job": job}


def _object_pages(objects):
    r, d, j = objects["repository"].pk, objects["dataset"].pk, objects["job"].pk
    return {
        "get": [
            f"/repositories/{r}/",
            f"/repositories/{r}/recipe",
            f"/repositories/{r}/import-progress",
            f"/datasets/{d}/",
            f"/jobs/{j}/",
            f"/jobs/{j}/progress",
        ],
        "post": [
            f"/repositories/{r}/retry",
            f"/repositories/{r}/recipe",
            f"/datasets/{d}/policy",
            f"/datasets/{d}/members",
            f"/datasets/{d}/members/1/remove",
            f"/jobs/{j}/retry",
            f"/jobs/{j}/cancel",
        ],
    }


def test_a_curator_opens_every_page(curator, objects):
    for url in LIST_PAGES + _object_pages(objects)["get"]:
        response = curator.get(url)
        assert response.status_code in (200, 286), url


def test_a_reviewer_is_refused_with_403(reviewer, objects):
    pages = _object_pages(objects)
    for url in LIST_PAGES + pages["get"]:
        response = reviewer.get(url)
        assert response.status_code == 403, url
        assert b"This page is for curators" in response.content, url
    assert reviewer.get(pages["get"][0], HTTP_HX_REQUEST="true").status_code == 403
    for url in POSTS + pages["post"]:
        assert reviewer.post(url).status_code == 403, url


def test_someone_without_a_role_sees_nothing(outsider, objects):
    pages = _object_pages(objects)
    for url in LIST_PAGES:
        response = outsider.get(url)
        assert response.status_code == 403, url
        assert b"No access yet" in response.content
    for url in pages["get"] + pages["post"]:
        method = outsider.get if url in pages["get"] else outsider.post
        assert method(url).status_code == 404, url


def test_anonymous_visitors_are_sent_to_log_in(client, objects):
    for url in LIST_PAGES + _object_pages(objects)["get"]:
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"], url


def test_wrong_methods_are_refused(curator, objects):
    pages = _object_pages(objects)
    for url in ["/repositories/", "/datasets/", "/jobs/"] + [
        p for p in pages["get"] if "recipe" not in p
    ]:
        assert curator.post(url).status_code == 405, url
    for url in POSTS + [p for p in pages["post"] if "recipe" not in p]:
        assert curator.get(url).status_code == 405, url
    for url in ["/synthesize/", "/trajectories/", pages["get"][1]]:
        assert curator.put(url).status_code == 405, url


def test_unknown_objects_are_404(curator):
    for url in ["/repositories/999/", "/datasets/999/", "/jobs/999/", "/jobs/999/progress"]:
        assert curator.get(url).status_code == 404, url


def test_the_navigation_leads_curators_to_the_pipeline(client, alice, bob):
    client.force_login(bob)
    assert 'href="/repositories/"' in client.get("/").content.decode()
    jobs = client.get("/jobs/").content.decode()
    for url in LIST_PAGES:
        assert f'href="{url}"' in jobs
    client.force_login(alice)
    assert 'href="/repositories/"' not in client.get("/").content.decode()
