"""Shared fixtures: the three users of every view test and a few paths.

alice reviews, bob curates, carol has an account and no role (the outsider).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.factories import DatasetFactory, UserFactory

requires_postgres = pytest.mark.skipif(
    not os.environ.get("DATABASE_URL", "").startswith("postgres"),
    reason="needs PostgreSQL: set DATABASE_URL=postgres://... (CI does)",
)
requires_redis = pytest.mark.skipif(
    not os.environ.get("REDIS_URL"),
    reason="needs Redis: set REDIS_URL=redis://... (CI does)",
)
requires_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="needs root to create network namespaces and drop to nobody"
)


@pytest.fixture
def alice(db):
    return UserFactory(username="alice", roles=["reviewer"])


@pytest.fixture
def bob(db):
    return UserFactory(username="bob", roles=["curator"])


@pytest.fixture
def carol(db):
    return UserFactory(username="carol")


@pytest.fixture
def dataset(db, alice):
    dataset = DatasetFactory(name="core")
    dataset.members.add(alice)
    return dataset


@pytest.fixture
def repo_storage(settings, tmp_path):
    """A fresh storage root per test so imported repositories never collide."""
    settings.STORAGE_ROOT = tmp_path / "storage"
    settings.SPECLOOM_REPO_ROOT = settings.STORAGE_ROOT / "repos"
    settings.SPECLOOM_RELEASE_ROOT = settings.STORAGE_ROOT / "releases"
    return settings.SPECLOOM_REPO_ROOT


@pytest.fixture
def sandbox_root(settings):
    """The sandbox for app-level tests: environments cached across test runs."""

    # Beside the sandbox tests' root ($SPECLOOM_TEST_SANDBOX_ROOT): runs sharing a machine
    # (several checkouts) each set their own, so one run's sweep never removes another's runs.
    root = os.environ.get("SPECLOOM_TEST_SANDBOX_ROOT", "/var/tmp/specloom-test-jail")
    settings.SPECLOOM_SANDBOX_ROOT = Path(f"{root}-app")
    _forget_sandbox_backend()
    yield settings.SPECLOOM_SANDBOX_ROOT
    _forget_sandbox_backend()


def _forget_sandbox_backend() -> None:
    """The next test gets a backend of its own; this one's warm jails end now, not at exit."""
    from curation import runtime

    if runtime.sandbox_backend.cache_info().currsize:
        runtime.sandbox_backend().close()
    runtime.sandbox_backend.cache_clear()


@pytest.fixture(autouse=True)
def _long_job_leases(settings):
    # Tests run handlers inside a transaction the heartbeat thread cannot see; a lease longer
    # than any test keeps that thread from declaring the job lost.
    settings.JOB_LEASE_SECONDS = 3600


@pytest.fixture(autouse=True)
def _fresh_cache():
    # The cache outlives a test's transaction, and ids repeat between tests: a figure cached by
    # one test (the dashboard's pass rates) must not answer for another.
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()
