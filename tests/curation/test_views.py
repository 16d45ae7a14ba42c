"""The API tokens page and the releases pages."""

import pytest
from django.test import Client

from curation.models import ApiToken, Release
from curation.services.tokens import api_token_create
from tests.curation.release_helpers import cut, reviewed_task
from tests.factories import DatasetFactory
from workers.services import job_execute

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def release_root(settings, tmp_path):
    settings.SPECLOOM_RELEASE_ROOT = tmp_path / "releases"


def _login(client, user):
    client.force_login(user)
    return client


# --- tokens -------------------------------------------------------------------------------------


def test_the_tokens_page_lists_my_tokens_only(client, alice, bob):
    api_token_create(user=alice, name="mine", scopes=["read"])
    api_token_create(user=bob, name="bobs", scopes=["read"])
    response = _login(client, alice).get("/tokens/")
    assert response.status_code == 200
    assert b"mine" in response.content and b"bobs" not in response.content
    assert b'href="/tokens/"' in response.content  # the nav links here


def test_creating_a_token_shows_the_key_once_and_it_works(client, alice, dataset):
    response = _login(client, alice).post("/tokens/new", {"name": "laptop", "scopes": ["read"]})
    assert response.status_code == 201
    assert response["Cache-Control"] == "no-store"
    key = response.context["new_key"]
    assert key.encode() in response.content
    token = ApiToken.objects.get(user=alice, name="laptop")
    assert token.scopes == ["read"]
    assert key.encode() not in client.get("/tokens/").content
    api = Client(HTTP_AUTHORIZATION=f"Bearer {key}")
    assert api.get("/api/v1/datasets").status_code == 200


def test_bad_token_input_gets_a_400_with_the_reason(client, alice):
    _login(client, alice)
    response = client.post("/tokens/new", {"name": "", "scopes": ["read"]})
    assert response.status_code == 400
    assert b"This field is required" in response.content
    response = client.post("/tokens/new", {"name": "cut", "scopes": ["release"]})
    assert response.status_code == 400
    assert b"the release scope needs the curator role" in response.content
    response = client.post("/tokens/new", {"name": "x", "scopes": ["root"]})
    assert response.status_code == 400
    assert not ApiToken.objects.exists()


def test_revoking_a_token_stops_it(client, alice, dataset):
    token, key = api_token_create(user=alice, name="old", scopes=["read"])
    response = _login(client, alice).post(f"/tokens/{token.pk}/revoke")
    assert response.status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert Client(HTTP_AUTHORIZATION=f"Bearer {key}").get("/api/v1/datasets").status_code == 401
    assert b"revoked" in client.get("/tokens/").content


def test_someone_elses_token_is_a_404(client, alice, bob):
    token, _ = api_token_create(user=bob, name="bobs", scopes=["read"])
    assert _login(client, alice).post(f"/tokens/{token.pk}/revoke").status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None


def test_the_tokens_pages_refuse_wrong_methods(client, alice):
    _login(client, alice)
    assert client.post("/tokens/").status_code == 405
    assert client.get("/tokens/new").status_code == 405
    assert client.get("/tokens/1/revoke").status_code == 405


def test_outsiders_and_anonymous_users_get_no_tokens(client, carol):
    response = client.get("/tokens/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    _login(client, carol)
    assert client.get("/tokens/").status_code == 403
    assert client.post("/tokens/new", {"name": "x", "scopes": ["read"]}).status_code == 403
    assert not ApiToken.objects.exists()


def test_token_forms_need_the_csrf_token(alice):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.post("/tokens/new", {"name": "x", "scopes": ["read"]}).status_code == 403


# --- releases -----------------------------------------------------------------------------------


def test_the_releases_page_lists_visible_releases(client, alice, dataset):
    reviewed_task(dataset=dataset)
    mine = cut(dataset)
    other = DatasetFactory(name="secret")
    reviewed_task(dataset=other)
    cut(other)
    response = _login(client, alice).get("/releases/")
    assert response.status_code == 200
    assert list(response.context["releases"]) == [mine]
    assert response.context["form"] is None  # reviewers do not cut releases


def test_a_curator_cuts_a_release_from_the_page(client, bob, dataset):
    reviewed_task(dataset=dataset)
    _login(client, bob)
    assert client.get("/releases/").context["form"] is not None
    response = client.post("/releases/cut", {"dataset": "core", "version": "2026.06"})
    release = Release.objects.get(version="2026.06")
    assert response.status_code == 302
    assert response["Location"] == f"/releases/{release.pk}/"
    assert job_execute(job_id=release.job_id) == "succeeded"
    page = client.get(f"/releases/{release.pk}/")
    assert page.status_code == 200
    assert b"core-2026.06.parquet" in page.content
    assert b"Reviewer agreement" in page.content


def test_cutting_from_the_page_needs_a_curator_and_good_input(client, alice, bob, dataset):
    _login(client, alice)
    assert client.post("/releases/cut", {"dataset": "core"}).status_code == 403
    _login(client, bob)
    response = client.post("/releases/cut", {"dataset": "nope"})
    assert response.status_code == 400
    response = client.post("/releases/cut", {"dataset": "core", "version": "bad version"})
    assert response.status_code == 302
    assert not Release.objects.exists()
    assert client.get("/releases/cut").status_code == 405


def test_a_release_page_of_another_dataset_is_a_404(client, alice, carol, dataset):
    other = DatasetFactory(name="secret")
    reviewed_task(dataset=other)
    hidden = cut(other)
    assert _login(client, alice).get(f"/releases/{hidden.pk}/").status_code == 404
    assert _login(client, carol).get(f"/releases/{hidden.pk}/").status_code == 403
    assert client.post(f"/releases/{hidden.pk}/").status_code == 405


def test_the_status_fragment_polls_until_the_release_is_ready(client, bob, dataset):
    reviewed_task(dataset=dataset)
    _login(client, bob)
    client.post("/releases/cut", {"dataset": "core"})
    release = Release.objects.get()
    fragment = client.get(f"/releases/{release.pk}/", HTTP_HX_REQUEST="true")
    assert fragment.status_code == 200
    assert b'hx-trigger="every 2s"' in fragment.content
    assert b"<html" not in fragment.content
    job_execute(job_id=release.job_id)
    done = client.get(f"/releases/{release.pk}/", HTTP_HX_REQUEST="true")
    assert done.status_code == 286
    assert done["HX-Refresh"] == "true"
