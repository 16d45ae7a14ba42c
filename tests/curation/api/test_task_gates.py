"""The API's save-time gates on task content (POST and PATCH /api/v1/tasks): a blank or
oversized problem statement and patches that do not compile are refused with the API's error
body; PATCH edits a task as a new revision (curators, write scope)."""

import pytest

from curation.models import Task
from tests.curation.api.support import error_of
from tests.curation.services.test_gates import BAD_STATEMENTS
from tests.curation.tasks_fixtures import hand_made_task, sample_repository

pytestmark = pytest.mark.django_db


@pytest.fixture
def stored(dataset, repo_storage):
    return hand_made_task("marktext_toc", dataset=dataset)


# --- the API -------------------------------------------------------------------------------------


def _api_task(alice_or_bob, token_client, **fields):
    from tests.curation.api.test_tasks import NEW_TASK

    return token_client(alice_or_bob, "write").post(
        "/api/v1/tasks", {**NEW_TASK, **fields}, format="json"
    )


@pytest.mark.parametrize(("text", "says"), BAD_STATEMENTS)
def test_api_post_refuses_a_bad_statement(token_client, bob, dataset, repo_storage, text, says):
    sample_repository("ledger")
    response = _api_task(bob, token_client, problem_statement=text)
    assert response.status_code == 400
    assert says in str(error_of(response)["details"])
    assert not Task.objects.exists()


def test_api_post_refuses_a_patch_that_does_not_compile(token_client, bob, dataset, repo_storage):
    sample_repository("ledger")
    broken = (
        "diff --git a/src/ledger/extra.py b/src/ledger/extra.py\nnew file mode 100644\n"
        "--- /dev/null\n+++ b/src/ledger/extra.py\n@@ -0,0 +1,2 @@\n+def f(:\n+    pass\n"
    )
    response = _api_task(bob, token_client, test_patch=broken)
    assert response.status_code == 400
    assert "src/ledger/extra.py, line 1" in str(error_of(response)["details"])


@pytest.mark.parametrize(("text", "says"), BAD_STATEMENTS)
def test_api_patch_refuses_a_bad_statement(token_client, bob, stored, text, says):
    response = token_client(bob, "write").patch(
        f"/api/v1/tasks/{stored.pk}", {"revision": 1, "problem_statement": text}, format="json"
    )
    assert response.status_code == 400
    assert says in str(error_of(response)["details"])


def test_api_patch_edits_a_task_as_a_new_revision(token_client, bob, stored):
    response = token_client(bob, "write").patch(
        f"/api/v1/tasks/{stored.pk}",
        {"revision": 1, "problem_statement": "Build the table of contents."},
        format="json",
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["revision"] == 2 and body["status"] == "validating"
    assert body["problem_statement"] == "Build the table of contents."


def test_api_patch_is_409_on_a_stale_revision_with_the_other_change(token_client, bob, stored):
    client = token_client(bob, "write")
    client.patch(f"/api/v1/tasks/{stored.pk}", {"revision": 1, "title": "A"}, format="json")
    response = client.patch(
        f"/api/v1/tasks/{stored.pk}", {"revision": 1, "title": "B"}, format="json"
    )
    assert response.status_code == 409
    error = error_of(response)
    assert error["code"] == "conflict" and error["details"]["current_revision"] == 2
    assert error["details"]["changes"][0]["changes"]["title"]["after"] == "A"


def test_api_patch_needs_a_curator_with_the_write_scope(token_client, alice, bob, stored):
    for client in (token_client(alice, "write"), token_client(bob, "read")):
        response = client.patch(f"/api/v1/tasks/{stored.pk}", {"revision": 1}, format="json")
        assert response.status_code == 403
    response = token_client(bob, "write").put(f"/api/v1/tasks/{stored.pk}", {}, format="json")
    assert response.status_code == 405


def test_api_patch_bad_input(token_client, bob, stored):
    client = token_client(bob, "write")
    response = client.patch(f"/api/v1/tasks/{stored.pk}", {"title": "no revision"}, format="json")
    assert response.status_code == 400 and "revision" in error_of(response)["details"]
    response = client.patch(
        f"/api/v1/tasks/{stored.pk}", {"revision": 1, "tests": {"nope": {}}}, format="json"
    )
    assert response.status_code == 400
    assert client.patch("/api/v1/tasks/999999", {"revision": 1}, format="json").status_code == 404
