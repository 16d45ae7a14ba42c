"""Login throttling (django-axes): per username and address, configurable, unlocked by an admin."""

import pytest
from axes.models import AccessAttempt
from django.test import Client

from tests.factories import UserFactory
from tests.specloom.test_env import _run_manage

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"


def _login(client: Client, username: str, password: str):
    return client.post("/accounts/login/", {"username": username, "password": password})


def _logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


@pytest.fixture
def limit(settings):
    settings.AXES_FAILURE_LIMIT = 3
    return 3


def test_it_locks_a_username_from_an_address_after_the_limit(bob, limit):
    client = Client(REMOTE_ADDR="203.0.113.7")
    statuses = [_login(client, "bob", "wrong").status_code for _ in range(limit)]
    # The attempt that reaches the limit already gets the lockout page.
    assert statuses == [200] * (limit - 1) + [429]
    response = _login(client, "bob", PASSWORD)
    assert response.status_code == 429
    assert b"Too many failed logins" in response.content
    assert not _logged_in(client)


def test_the_lock_holds_for_that_username_and_address_only(bob, alice, limit):
    attacker = Client(REMOTE_ADDR="203.0.113.7")
    for _ in range(limit + 2):
        _login(attacker, "bob", "wrong")
    # alice from the same address, and bob from elsewhere, log in as usual.
    same_address = Client(REMOTE_ADDR="203.0.113.7")
    assert _login(same_address, "alice", PASSWORD).status_code == 302
    elsewhere = Client(REMOTE_ADDR="198.51.100.9")
    assert _login(elsewhere, "bob", PASSWORD).status_code == 302
    assert _logged_in(elsewhere)


def test_the_admin_login_is_throttled_too(limit):
    UserFactory(username="root", is_staff=True, is_superuser=True)
    client = Client(REMOTE_ADDR="203.0.113.7")
    for _ in range(limit):
        client.post("/admin/login/", {"username": "root", "password": "wrong"})
    response = client.post("/admin/login/", {"username": "root", "password": PASSWORD})
    assert response.status_code == 429
    assert not _logged_in(client)


def test_a_good_login_clears_the_count(bob, limit):
    client = Client(REMOTE_ADDR="203.0.113.7")
    for _ in range(limit - 1):
        _login(client, "bob", "wrong")
    assert _login(client, "bob", PASSWORD).status_code == 302
    client.logout()
    for _ in range(limit - 1):
        _login(client, "bob", "wrong")
    assert _login(client, "bob", PASSWORD).status_code == 302


def test_an_admin_unlocks_a_locked_user(bob, admin_client, limit):
    client = Client(REMOTE_ADDR="203.0.113.7")
    for _ in range(limit):
        _login(client, "bob", "wrong")
    assert _login(client, "bob", PASSWORD).status_code == 429
    attempt = AccessAttempt.objects.get(username="bob")
    page = admin_client.get("/admin/axes/accessattempt/")
    assert page.status_code == 200 and b"bob" in page.content
    response = admin_client.post(f"/admin/axes/accessattempt/{attempt.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert _login(client, "bob", PASSWORD).status_code == 302


def test_the_limits_come_from_the_environment(settings):
    # The defaults, and the variables that change them (read by specloom.env's typed helpers).
    assert settings.AXES_LOCKOUT_PARAMETERS == [["username", "ip_address"]]
    result = _run_manage("check", SPECLOOM_LOGIN_FAILURE_LIMIT="many")
    assert result.returncode != 0
    assert "SPECLOOM_LOGIN_FAILURE_LIMIT must be an integer, got 'many'" in result.stderr
    result = _run_manage("check", SPECLOOM_LOGIN_COOLOFF_MINUTES="0")
    assert "SPECLOOM_LOGIN_COOLOFF_MINUTES must be at least 1" in result.stderr
