"""Property-based tests of the whole API from its own OpenAPI schema (schemathesis, in process).

Every operation gets a bounded number of generated requests, valid and invalid, made with a
curator's token that holds every scope, and every check schemathesis has judges every answer.
"""

from __future__ import annotations

import json

import pytest
import schemathesis
from django.conf import settings as django_settings
from django.core import signals
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir
from schemathesis.checks import CHECKS as ALL_CHECKS
from schemathesis.checks import load_all_checks
from schemathesis.specs.openapi.checks import positive_data_acceptance

from curation.models import Finding
from curation.services.tokens import api_token_create
from tests.curation.release_helpers import cut, evaluated_trajectory, review, reviewed_task
from workers.services import job_enqueue

pytestmark = pytest.mark.django_db

# Hypothesis keeps caches (unicode tables, constants) in a home folder; it goes with the test
# run's other files rather than into the checkout.
set_hypothesis_home_dir(django_settings.VAR_DIR / "hypothesis")

EXAMPLES_PER_OPERATION = 15
# Every check schemathesis has, as `st run --checks all` runs them: no server error; status,
# content type, headers and body as the schema says; invalid input (as the schema defines it)
# refused and valid input accepted; a missing required header, an undeclared method and a
# request without credentials refused; the Allow header right. (The stateful ones, about
# resources used after deletion, only act in a stateful run: scripts/fuzz_api.sh.)
load_all_checks()
CHECKS = list(ALL_CHECKS.get_all())
# The exemptions of schemathesis.toml (the long run's configuration), and why: positive-data
# acceptance is not judged where a schema cannot state what is valid (a trajectory file's
# records; a task whose parts refer to one another and to its repository; an upload that must
# be an archive, a URL that must be clonable; a recipe's requirements).
NOT_JUDGED_ON_VALID_INPUT = {
    ("POST", "/api/v1/trajectories"),
    ("POST", "/api/v1/tasks"),
    ("POST", "/api/v1/repositories"),
    ("PUT", "/api/v1/repositories/{id}/recipe"),
}


@pytest.fixture
def api_key(bob, alice, dataset):
    """Something of everything to find, and a key with every scope."""
    approved = reviewed_task(dataset=dataset)
    reviewed_task(dataset=dataset, status="needs_review")
    reviewed_task(dataset=dataset, difficulty="")  # unrated: null in responses
    evaluated_trajectory(approved, model="model-a", resolved="full")
    evaluated_trajectory(approved, model="model-b", resolved="none", unsafe=True)
    Finding.objects.create(task=approved, kind="weak_test", message="an empty patch passes")
    review(approved, alice, "approve")
    cut(dataset)
    job_enqueue(kind="echo", user=bob)
    scopes = ["read", "write", "release", "grade"]
    _, key = api_token_create(user=bob, name="schemathesis", scopes=scopes)
    return key


def _generated_schema() -> dict:
    """The schema /api/schema/ serves, generated in process (no database or request needed)."""
    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.renderers import OpenApiJsonRenderer

    data = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(data))


def _load() -> schemathesis.BaseSchema:
    # Loaded when the module is collected: schemathesis's fixture-based loader relies on a pytest
    # internal that pytest 9 removed. The app is set as `from_wsgi` sets it, so every call goes
    # to the WSGI application in process.
    from specloom.wsgi import application

    loaded = schemathesis.openapi.from_dict(_generated_schema())
    loaded.app = application
    return loaded


schema = _load()


@pytest.fixture(autouse=True)
def _in_process_requests(settings, tmp_path):
    settings.SPECLOOM_RELEASE_ROOT = tmp_path / "releases"
    # The auth checks send thousands of invalid tokens from one address; past the failed-token
    # limit those would be answered 429 rather than the 401 the checks look for.
    settings.API_FAILED_AUTH_LIMIT = 10**9
    # Grades queued here never run (no worker): a long-poll would only wait out its time.
    settings.SPECLOOM_GRADE_WAIT_MAX_SECONDS = 0
    # Requests go straight to the WSGI application on this thread, inside the test's
    # transaction; Django must not close that connection between requests (its own test
    # client disconnects these handlers for the same reason).
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


def test_the_schema_tested_is_the_schema_served(client, alice):
    client.force_login(alice)
    served = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    assert served == _generated_schema()


@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
    database=None,  # reproducible from the seed; nothing written into the checkout
)
def test_the_api_answers_every_generated_request_as_its_schema_says(case, api_key):
    checks = CHECKS
    if (case.operation.method.upper(), case.operation.path) in NOT_JUDGED_ON_VALID_INPUT:
        checks = [check for check in CHECKS if check is not positive_data_acceptance]
    case.call_and_validate(headers={"Authorization": f"Bearer {api_key}"}, checks=checks)
