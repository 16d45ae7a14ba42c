"""API clients authenticated with real tokens, and a release root per test."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from curation.services.tokens import api_token_create


@pytest.fixture(autouse=True)
def release_root(settings, tmp_path):
    settings.SPECLOOM_RELEASE_ROOT = tmp_path / "releases"
    return settings.SPECLOOM_RELEASE_ROOT


@pytest.fixture(autouse=True)
def _fresh_auth_failures():
    # The failed-authentication counter lives in the cache, which outlives a test's transaction.
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def token_client():
    """`token_client(user, "read", "write")`: an API client holding a new token of that user."""
    counter = iter(range(1_000_000))

    def make(user, *scopes: str) -> APIClient:
        _, key = api_token_create(
            user=user, name=f"test-{next(counter)}", scopes=scopes or ("read",)
        )
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
        client.key = key
        return client

    return make
