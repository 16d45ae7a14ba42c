"""Releases and API tokens in the admin: cut from there, and a release never changes there."""

import pytest
from django.contrib.messages import get_messages

from curation.models import ApiToken, Release
from curation.services.tokens import api_token_create
from tests.curation.release_helpers import cut, reviewed_task
from workers.services import job_execute

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def release_root(settings, tmp_path):
    settings.SPECLOOM_RELEASE_ROOT = tmp_path / "releases"


def _messages(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def test_adding_a_release_in_the_admin_cuts_it(admin_client, dataset):
    reviewed_task(dataset=dataset)
    response = admin_client.post(
        "/admin/curation/release/add/", {"dataset": dataset.pk, "version": ""}
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    release = Release.objects.get()
    assert release.version == "v1" and release.status == "building"
    assert job_execute(job_id=release.job_id) == "succeeded"
    release.refresh_from_db()
    assert release.status == "ready"


def test_the_admin_refuses_a_version_that_exists(admin_client, dataset):
    reviewed_task(dataset=dataset)
    cut(dataset)
    response = admin_client.post(
        "/admin/curation/release/add/", {"dataset": dataset.pk, "version": "v1"}
    )
    assert response.status_code == 200
    assert "already has a release v1" in str(response.context["adminform"].form.errors)
    assert Release.objects.count() == 1


def test_a_dataset_action_cuts_the_next_version(admin_client, dataset):
    reviewed_task(dataset=dataset)
    cut(dataset)
    response = admin_client.post(
        "/admin/curation/dataset/",
        {"action": "cut_release", "_selected_action": [dataset.pk]},
        follow=True,
    )
    assert any("Cutting core v2" in m for m in _messages(response))
    assert Release.objects.filter(version="v2", status="building").exists()


def test_a_ready_release_cannot_be_changed_or_deleted_in_the_admin(admin_client, dataset):
    reviewed_task(dataset=dataset)
    release = cut(dataset)
    before = Release.objects.get(pk=release.pk)
    page = admin_client.get(f"/admin/curation/release/{release.pk}/change/")
    assert page.status_code == 200
    assert not page.context["has_change_permission"]
    response = admin_client.post(f"/admin/curation/release/{release.pk}/change/", {"version": "v9"})
    assert response.status_code == 403
    assert admin_client.post(f"/admin/curation/release/{release.pk}/delete/").status_code == 403
    response = admin_client.post(
        "/admin/curation/release/",
        {"action": "delete_selected", "_selected_action": [release.pk], "post": "yes"},
    )
    after = Release.objects.get(pk=release.pk)
    assert (after.version, after.files, after.manifest) == (
        before.version,
        before.files,
        before.manifest,
    )


def test_a_failed_release_is_deleted_in_the_admin(admin_client, dataset):
    release = Release.objects.create(dataset=dataset, version="v1", status="failed")
    response = admin_client.post(f"/admin/curation/release/{release.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Release.objects.exists()


def test_the_admin_creates_a_token_and_shows_the_key_once(admin_client, alice):
    response = admin_client.post(
        "/admin/curation/apitoken/add/",
        {"user": alice.pk, "name": "ci", "scopes": ["write"]},
        follow=True,
    )
    token = ApiToken.objects.get(user=alice, name="ci")
    assert token.scopes == ["read", "write"]
    (shown,) = [m for m in _messages(response) if "copy it now" in m]
    assert f"sl_{token.prefix}_" in shown


def test_the_admin_refuses_a_release_token_for_a_reviewer(admin_client, alice, carol):
    for user, scopes in ((alice, ["release"]), (carol, ["read"])):
        response = admin_client.post(
            "/admin/curation/apitoken/add/", {"user": user.pk, "name": "x", "scopes": scopes}
        )
        assert response.status_code == 200
        assert response.context["adminform"].form.errors
    assert not ApiToken.objects.exists()


def test_the_admin_revokes_tokens(admin_client, alice):
    token, _ = api_token_create(user=alice, name="old", scopes=["read"])
    admin_client.post(
        "/admin/curation/apitoken/",
        {"action": "revoke_tokens", "_selected_action": [token.pk]},
    )
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_a_building_release_is_not_deleted_in_the_admin(admin_client, dataset):
    release = Release.objects.create(dataset=dataset, version="v1", status="building")
    response = admin_client.post(f"/admin/curation/release/{release.pk}/delete/", {"post": "yes"})
    assert response.status_code == 403
    admin_client.post(
        "/admin/curation/release/",
        {"action": "delete_selected", "_selected_action": [release.pk], "post": "yes"},
    )
    assert Release.objects.filter(pk=release.pk, status="building").exists()
