"""Bearer tokens: hashed at rest, scoped, revocable, throttled after repeated failures."""

import hashlib

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from curation.models import ApiToken
from curation.services.tokens import TokenInputError, api_token_create, api_token_revoke
from tests.curation.api.support import error_of

pytestmark = pytest.mark.django_db


def test_it_stores_only_the_hash_of_the_key(alice):
    token, key = api_token_create(user=alice, name="pipeline", scopes=["read"])
    assert key.startswith(f"sl_{token.prefix}_")
    assert token.key_sha256 == hashlib.sha256(key.encode()).hexdigest()
    stored = ApiToken.objects.filter(pk=token.pk).values()[0]
    assert key not in {str(value) for value in stored.values()}


def test_write_and_release_scopes_include_read(bob):
    token, _ = api_token_create(user=bob, name="cutter", scopes=["release"])
    assert token.scopes == ["read", "release"]


def test_it_refuses_tokens_it_should_not_make(alice, bob, carol):
    with pytest.raises(TokenInputError, match="role"):
        api_token_create(user=carol, name="x", scopes=["read"])
    with pytest.raises(TokenInputError, match="curator"):
        api_token_create(user=alice, name="x", scopes=["release"])
    with pytest.raises(TokenInputError, match="unknown scope"):
        api_token_create(user=bob, name="x", scopes=["admin"])
    with pytest.raises(TokenInputError, match="at least one"):
        api_token_create(user=bob, name="x", scopes=[])
    api_token_create(user=bob, name="x", scopes=["read"])
    with pytest.raises(TokenInputError, match="already have a token named"):
        api_token_create(user=bob, name="x", scopes=["read"])


def test_a_token_authenticates_and_records_when_it_was_used(token_client, alice, dataset):
    client = token_client(alice, "read")
    response = client.get("/api/v1/datasets")
    assert response.status_code == 200
    assert [d["name"] for d in response.json()["results"]] == ["core"]
    token = ApiToken.objects.get(user=alice)
    assert token.last_used_at is not None
    assert (timezone.now() - token.last_used_at).total_seconds() < 60


def test_a_wrong_or_revoked_token_gets_401(token_client, alice):
    client = token_client(alice, "read")
    api_token_revoke(token=ApiToken.objects.get(user=alice))
    response = client.get("/api/v1/datasets")
    assert response.status_code == 401
    assert error_of(response)["code"] == "not_authenticated"
    assert response["WWW-Authenticate"] == "Bearer"

    bogus = APIClient()
    bogus.credentials(HTTP_AUTHORIZATION="Bearer sl_nothere_nope")
    assert bogus.get("/api/v1/datasets").status_code == 401


def test_no_credentials_gets_401_with_the_error_body(client, dataset):
    response = client.get("/api/v1/tasks")
    assert response.status_code == 401
    assert error_of(response)["code"] == "not_authenticated"


def test_repeated_failed_authentication_is_throttled(settings, token_client, alice):
    settings.API_FAILED_AUTH_LIMIT = 3
    bogus = APIClient()
    bogus.credentials(HTTP_AUTHORIZATION="Bearer sl_guess_guess")
    assert [bogus.get("/api/v1/datasets").status_code for _ in range(3)] == [401] * 3
    response = bogus.get("/api/v1/datasets")
    assert response.status_code == 429
    assert error_of(response)["code"] == "throttled"
    assert int(response["Retry-After"]) > 0
    # Another bad key from that address waits too: the count is on the address as well.
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION="Bearer sl_other_guess")
    assert other.get("/api/v1/datasets").status_code == 429


def test_a_valid_token_is_never_refused_by_the_failure_limit(settings, token_client, alice):
    # Behind a proxy or a NAT one address is everyone: bad tokens from it must not lock out
    # the good ones.
    settings.API_FAILED_AUTH_LIMIT = 3
    bogus = APIClient()
    bogus.credentials(HTTP_AUTHORIZATION="Bearer sl_guess_guess")
    for _ in range(10):
        bogus.get("/api/v1/datasets")
    assert bogus.get("/api/v1/datasets").status_code == 429
    good = token_client(alice, "read")
    assert [good.get("/api/v1/datasets").status_code for _ in range(3)] == [200] * 3
    assert bogus.get("/api/v1/datasets").status_code == 429


def test_failures_against_one_prefix_are_counted_across_addresses(settings, token_client, alice):
    settings.API_FAILED_AUTH_LIMIT = 3
    good = token_client(alice, "read")
    prefix = good.key.split("_")[1]
    statuses = []
    for number in range(5):
        guesser = APIClient(REMOTE_ADDR=f"10.0.0.{number + 1}")
        guesser.credentials(HTTP_AUTHORIZATION=f"Bearer sl_{prefix}_wrong{number}")
        statuses.append(guesser.get("/api/v1/datasets").status_code)
    assert statuses == [401, 401, 401, 429, 429]
    # The owner of that prefix, from one of those very addresses, is let in.
    good.defaults["REMOTE_ADDR"] = "10.0.0.5"
    assert good.get("/api/v1/datasets").status_code == 200


def test_a_read_token_cannot_write(token_client, bob, dataset):
    client = token_client(bob, "read")
    response = client.post("/api/v1/releases", {"dataset": "core"}, format="json")
    assert response.status_code == 403
    assert error_of(response)["code"] == "permission_denied"


def test_a_write_token_cannot_cut_a_release(token_client, bob, dataset):
    client = token_client(bob, "write")
    assert client.post("/api/v1/releases", {"dataset": "core"}, format="json").status_code == 403


def test_a_token_has_no_more_rights_than_its_user(token_client, alice, bob, dataset):
    # alice (reviewer) holds a write token; cutting needs the curator role as in the UI.
    client = token_client(alice, "write")
    assert client.post("/api/v1/releases", {"dataset": "core"}, format="json").status_code == 403
    # bob loses his role: his token stops working for anything.
    client = token_client(bob, "read")
    bob.groups.clear()
    response = client.get("/api/v1/datasets")
    assert response.status_code == 403


def test_an_outsider_with_a_session_gets_403(client, carol):
    client.force_login(carol)
    response = client.get("/api/v1/tasks")
    assert response.status_code == 403
    assert error_of(response)["code"] == "permission_denied"


def test_session_writes_need_the_csrf_token(alice, bob, dataset):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(bob)
    response = client.post("/api/v1/releases", {"dataset": "core"}, format="json")
    assert response.status_code == 403
    assert "CSRF" in error_of(response)["message"]
