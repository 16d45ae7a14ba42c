import pytest


@pytest.fixture
def curator(client, bob):
    client.force_login(bob)
    return client


@pytest.fixture
def reviewer(client, alice):
    client.force_login(alice)
    return client


@pytest.fixture
def outsider(client, carol):
    client.force_login(carol)
    return client
