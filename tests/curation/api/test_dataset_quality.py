"""/api/v1/datasets/{id}/quality: the quality report of a dataset's tasks."""

from __future__ import annotations

import pytest

from tests.curation.selectors.test_quality import verified_task
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_the_api_gives_a_datasets_quality_report(token_client, alice, dataset):
    verified_task(dataset, tested=5, untested=1, f2p=3, linked=3, interaction_score=0.5)
    response = token_client(alice).get(f"/api/v1/datasets/{dataset.pk}/quality")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["dataset"] == "core"
    assert body["median_tested_specs_per_task"] == 5
    assert body["unverified_specs_not_counted"] == 1
    assert body["verified_only"] is True


def test_the_quality_endpoint_refuses_outsiders_and_writes(token_client, alice, bob, dataset):
    outsider = UserFactory(username="dave", roles=["reviewer"])  # not a member of `core`
    assert token_client(outsider).get(f"/api/v1/datasets/{dataset.pk}/quality").status_code == 404
    # A reviewer may not write to datasets at all; a curator may, but not to the report.
    reviewer = token_client(alice, "read", "write").post(f"/api/v1/datasets/{dataset.pk}/quality")
    assert reviewer.status_code == 403
    curator = token_client(bob, "read", "write").post(f"/api/v1/datasets/{dataset.pk}/quality")
    assert curator.status_code == 405
    assert token_client(alice).get("/api/v1/datasets/nope/quality").status_code == 404
