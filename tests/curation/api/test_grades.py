"""The grading API: scope, roles, input, idempotency, limits (429), conflicts (409), long-poll.

Grades are queued here and not run (the sandbox's part is tests/curation/services/
test_grading.py); a finished grade is written as the job would write it.
"""

from __future__ import annotations

import time

import pytest

from curation.models import Grade, Task, TestCase
from tests.curation.api.support import error_of
from tests.curation.release_helpers import reviewed_task
from tests.factories import DatasetFactory
from workers.models import Job

pytestmark = pytest.mark.django_db

PATCH = "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a\n+b\n"


@pytest.fixture
def task(dataset):
    return reviewed_task(dataset=dataset)


@pytest.fixture
def grader(alice, token_client):
    return token_client(alice, "grade")


def _finish(grade_id: int) -> None:
    Grade.objects.filter(pk=grade_id).update(
        status="done",
        resolved="full",
        patch_applied=True,
        test_outcomes={"tests/test_mod.py::test_old": "passed"},
        run_seconds=1.5,
    )


def test_it_queues_a_grade_of_one_patch_on_the_sandbox_queue(task, grader):
    response = grader.post(f"/api/v1/tasks/{task.pk}/grade", {"patch": PATCH}, format="json")
    assert response.status_code == 202
    body = response.json()
    assert (body["status"], body["resolved"], body["task_revision"]) == ("queued", None, 1)
    job = Job.objects.get(pk=body["job"])
    assert (job.kind, job.queue, job.params) == (
        "grade_patches",
        "sandbox",
        {"grade_ids": [body["id"]]},
    )
    assert body["models"] == ["unnamed"]


def test_a_repeat_returns_the_stored_grade(task, grader):
    url = f"/api/v1/tasks/{task.pk}/grade"
    first = grader.post(url, {"patch": PATCH, "model": "m1"}, format="json").json()
    _finish(first["id"])
    again = grader.post(url, {"patch": PATCH, "model": "m2"}, format="json")
    assert again.status_code == 200
    assert again.json()["id"] == first["id"] and again.json()["resolved"] is True
    assert again.json()["models"] == ["m1", "m2"]
    assert Job.objects.filter(kind="grade_patches").count() == 1
    # Another revision of the task is another grade.
    Task.objects.filter(pk=task.pk).update(revision=2)
    third = grader.post(url, {"patch": PATCH}, format="json").json()
    assert third["id"] != first["id"] and third["task_revision"] == 2


def test_a_batch_groups_the_patches_of_a_task_in_jobs(task, dataset, grader, settings):
    settings.SPECLOOM_GRADE_GROUP_SIZE = 2
    other = reviewed_task(dataset=dataset)
    items = [{"task": task.pk, "patch": PATCH + f"+{n}\n"} for n in range(3)]
    items.append({"task": other.pk, "patch": PATCH, "model": "m"})
    items.append(items[0])  # the same pair twice: one grade
    response = grader.post("/api/v1/grades", {"items": items}, format="json")
    assert response.status_code == 202
    grades = response.json()["grades"]
    assert len(grades) == 5 and grades[0]["id"] == grades[4]["id"]
    assert [g["created"] for g in grades] == [True, True, True, True, False]
    jobs = {g["job"] for g in grades}
    assert len(jobs) == 3  # 2 + 1 patches of the first task, 1 of the other
    assert sum(len(Job.objects.get(pk=j).params["grade_ids"]) for j in jobs) == 4


def test_it_answers_a_grade_and_several_by_id(task, grader):
    first = grader.post(f"/api/v1/tasks/{task.pk}/grade", {"patch": PATCH}, format="json").json()
    _finish(first["id"])
    second = grader.post(f"/api/v1/tasks/{task.pk}/grade", {"patch": ""}, format="json").json()
    one = grader.get(f"/api/v1/grades/{first['id']}?wait=5")
    assert one.status_code == 200 and one.json()["resolved"] is True
    assert one.json()["timings"]["run_seconds"] == 1.5
    many = grader.get(f"/api/v1/grades?ids={first['id']},{second['id']}&wait=0").json()
    assert [g["status"] for g in many] == ["done", "queued"]
    # A long-poll on an unfinished grade answers when its time is up, still queued.
    assert grader.get(f"/api/v1/grades/{second['id']}?wait=1").json()["status"] == "queued"


def test_a_stale_revision_is_a_409_with_the_current_one(task, grader):
    response = grader.post(
        f"/api/v1/tasks/{task.pk}/grade", {"patch": PATCH, "revision": 7}, format="json"
    )
    assert response.status_code == 409
    assert error_of(response)["details"] == {"task": task.pk, "revision": 1}


def test_a_task_without_tests_to_grade_is_a_409(task, grader):
    TestCase.objects.filter(task=task).update(role=TestCase.Role.INVALID)
    response = grader.post(
        "/api/v1/grades", {"items": [{"task": task.pk, "patch": PATCH}]}, format="json"
    )
    assert response.status_code == 409
    assert "no FAIL_TO_PASS" in error_of(response)["message"]


def test_the_rate_limit_answers_429_with_retry_after(task, grader, settings):
    settings.SPECLOOM_GRADE_RATE_PER_MINUTE = 2
    url = f"/api/v1/tasks/{task.pk}/grade"
    for n in range(2):
        assert grader.post(url, {"patch": PATCH + f"+{n}\n"}, format="json").status_code == 202
    refused = grader.post(url, {"patch": PATCH}, format="json")
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) >= 1
    assert error_of(refused)["code"] == "throttled"


def test_the_rate_limit_slides_over_the_minute_boundary(task, grader, settings):
    # What the token sent in the previous one-minute window still counts, for the part of it
    # the last 60 seconds cover: a window boundary does not reset the limit.
    from django.core.cache import cache

    from curation.models import ApiToken

    settings.SPECLOOM_GRADE_RATE_PER_MINUTE = 2
    token = ApiToken.objects.get(user__username="alice")
    for _attempt in range(2):  # once more if a minute began during the request
        window = int(time.time() // 60)
        cache.set(f"grade-rate:token:{token.pk}:{window - 1}", 10**6, 180)
        refused = grader.post(f"/api/v1/tasks/{task.pk}/grade", {"patch": PATCH}, format="json")
        if int(time.time() // 60) == window:
            break
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    # A refused request did not count: the current window is as it was.
    assert not cache.get(f"grade-rate:token:{token.pk}:{window}")


def test_the_concurrency_limit_counts_the_tokens_unfinished_grades(
    task, grader, alice, token_client, settings
):
    settings.SPECLOOM_GRADE_MAX_PENDING = 2
    url = f"/api/v1/tasks/{task.pk}/grade"
    first = grader.post(url, {"patch": PATCH}, format="json").json()
    assert grader.post(url, {"patch": ""}, format="json").status_code == 202
    refused = grader.post(url, {"patch": PATCH + "+x\n"}, format="json")
    assert refused.status_code == 429
    assert "queued or running" in error_of(refused)["message"]
    # A repeat adds nothing to run; another token of the same user has limits of its own.
    assert grader.post(url, {"patch": PATCH}, format="json").status_code == 202
    assert token_client(alice, "grade").post(url, {"patch": "x"}, format="json").status_code == 202
    _finish(first["id"])
    assert grader.post(url, {"patch": PATCH + "+x\n"}, format="json").status_code == 202


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("tasks/{task}/grade", {}, "patch"),
        ("tasks/{task}/grade", {"patch": PATCH, "revision": 0}, "revision"),
        ("tasks/{task}/grade", {"patch": PATCH, "model": "m" * 201}, "model"),
        ("grades", {"items": []}, "items"),
        ("grades", {"items": [{"patch": PATCH}]}, "items"),
        ("grades", {"items": "nope"}, "items"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(task, grader, path, body, field):
    response = grader.post("/api/v1/" + path.format(task=task.pk), body, format="json")
    assert response.status_code == 400
    assert field in error_of(response)["details"]


def test_limits_of_size_and_batch_are_400s(task, grader, settings):
    settings.SPECLOOM_GRADE_MAX_PATCH_BYTES = 10
    response = grader.post(f"/api/v1/tasks/{task.pk}/grade", {"patch": PATCH}, format="json")
    assert response.status_code == 400 and "limit is 10" in str(error_of(response))
    settings.SPECLOOM_GRADE_BATCH_MAX = 1
    items = [{"task": task.pk, "patch": ""}] * 2
    response = grader.post("/api/v1/grades", {"items": items}, format="json")
    assert response.status_code == 400


@pytest.mark.parametrize(
    "query", ["ids=", "ids=a,b", "ids=1&wait=-1", "ids=1&wait=x", "ids=1&wait=3601"]
)
def test_bad_query_parameters_are_400s(grader, query):
    assert grader.get(f"/api/v1/grades?{query}").status_code == 400


def test_grading_needs_the_grade_scope(task, alice, token_client):
    reader = token_client(alice, "read", "write")
    assert (
        reader.post(f"/api/v1/tasks/{task.pk}/grade", {"patch": ""}, format="json").status_code
        == 403
    )
    assert reader.post("/api/v1/grades", {"items": []}, format="json").status_code == 403
    assert reader.get("/api/v1/grades?ids=1").status_code == 403


def test_an_outsider_and_a_task_you_cannot_see_are_refused(task, carol, bob, token_client, client):
    client.force_login(carol)
    assert client.post(f"/api/v1/tasks/{task.pk}/grade", {"patch": ""}).status_code == 403
    stranger_task = reviewed_task(dataset=DatasetFactory(name="elsewhere"))
    grader = token_client(bob, "grade")
    from tests.factories import UserFactory

    outsider_reviewer = token_client(UserFactory(roles=["reviewer"]), "grade")
    url = f"/api/v1/tasks/{stranger_task.pk}/grade"
    assert outsider_reviewer.post(url, {"patch": ""}, format="json").status_code == 404
    response = outsider_reviewer.post(
        "/api/v1/grades", {"items": [{"task": stranger_task.pk, "patch": ""}]}, format="json"
    )
    assert response.status_code == 404
    seen = grader.post(url, {"patch": ""}, format="json").json()
    assert outsider_reviewer.get(f"/api/v1/grades/{seen['id']}").status_code == 404
    assert outsider_reviewer.get(f"/api/v1/grades?ids={seen['id']}").json() == []
    assert grader.get("/api/v1/grades/999999").status_code == 404


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "tasks/{task}/grade"),
        ("put", "tasks/{task}/grade"),
        ("put", "grades/1"),
        ("delete", "grades/1"),
        ("patch", "grades"),
    ],
)
def test_wrong_methods_are_405s(task, grader, method, path):
    response = getattr(grader, method)("/api/v1/" + path.format(task=task.pk))
    assert response.status_code == 405
    error_of(response)


def test_the_grade_scope_includes_read(alice):
    from curation.services.tokens import api_token_create

    token, _key = api_token_create(user=alice, name="grader", scopes=["grade"])
    assert token.scopes == ["read", "grade"]


def test_a_lost_worker_fails_its_unfinished_grades(task, grader):
    from curation.services.grading import grade_group_abandoned

    body = grader.post(f"/api/v1/tasks/{task.pk}/grade", {"patch": PATCH}, format="json").json()
    grade_group_abandoned(Job.objects.get(pk=body["job"]))
    answered = grader.get(f"/api/v1/grades/{body['id']}").json()
    assert answered["status"] == "failed" and "lost" in answered["error"]
    again = grader.post(f"/api/v1/tasks/{task.pk}/grade", {"patch": PATCH}, format="json")
    assert again.status_code == 202 and again.json()["status"] == "queued"


def test_a_patch_that_is_not_unicode_text_is_a_400(task, grader):
    response = grader.post(
        f"/api/v1/tasks/{task.pk}/grade",
        data='{"patch": "\\ud800"}',
        content_type="application/json",
    )
    assert response.status_code == 400
    error_of(response)


def test_a_token_holding_its_long_polls_gets_answers_at_once(task, grader, settings):
    settings.SPECLOOM_GRADE_MAX_WAITING = 0
    body = grader.post(f"/api/v1/tasks/{task.pk}/grade", {"patch": PATCH}, format="json").json()
    # Nothing runs the grade: with no long-poll allowed, a long wait answers at once, queued.
    answered = grader.get(f"/api/v1/grades/{body['id']}?wait=60")
    assert answered.status_code == 200 and answered.json()["status"] == "queued"
