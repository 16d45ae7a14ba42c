"""POST /api/v1/trajectories and reading trajectories back (real HTTP handling, real DB)."""

import json

import pytest

from curation.models import Trajectory, TrajectoryStep
from curation.services.tokens import api_token_create
from tests.curation import trajectory_fixtures as fx
from tests.curation.api.support import error_of
from tests.factories import DatasetFactory, TaskFactory
from workers.models import Job

pytestmark = pytest.mark.django_db

URL = "/api/v1/trajectories"
NDJSON = "application/x-ndjson"


@pytest.fixture
def task(dataset):
    return TaskFactory(dataset=dataset)


def _jsonl(records) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def _bearer(user, *scopes: str) -> dict:
    _token, key = api_token_create(user=user, name=f"pipeline-{'-'.join(scopes)}", scopes=scopes)
    return {"HTTP_AUTHORIZATION": f"Bearer {key}"}


def test_a_curator_imports_jsonl_and_gets_each_line_back(client, bob, task):
    client.force_login(bob)
    records = list(fx.ledger_records(task).values())
    body = _jsonl(records[:2]) + b'{"broken": \n' + _jsonl(records[2:3])
    response = client.post(f"{URL}?dataset=core", data=body, content_type=NDJSON)
    assert response.status_code == 201, response.content
    report = response.json()
    assert report["format"] == "specloom" and report["located_by"] == "line"
    assert [c["line"] for c in report["created"]] == [1, 2, 4]
    assert report["errors"][0]["line"] == 3
    assert report["counts"] == {"created": 3, "duplicates": 0, "errors": 1, "steps": 12}
    assert {c["model"] for c in report["created"]} == {
        fx.REFERENCE_MODEL,
        fx.EMPTY_MODEL,
        fx.PARTIAL_MODEL,
    }
    assert Job.objects.filter(kind="evaluate_trajectory").count() == 3
    assert Trajectory.objects.get(pk=report["created"][0]["id"]).imported_by == bob

    again = client.post(f"{URL}?dataset=core", data=_jsonl(records[:2]), content_type=NDJSON)
    assert again.status_code == 200
    assert [d["id"] for d in again.json()["duplicates"]] == [c["id"] for c in report["created"][:2]]


def test_a_json_list_and_a_single_object_import_too(client, bob, task):
    client.force_login(bob)
    records = fx.ledger_records(task)
    listed = client.post(
        f"{URL}?task={task.pk}",
        data=json.dumps([records["partial"], {"format": "specloom"}]),
        content_type="application/json",
    )
    assert listed.status_code == 201
    assert listed.json()["located_by"] == "index"
    assert listed.json()["errors"][0]["line"] == 1
    single = client.post(
        f"{URL}?task={task.pk}&evaluate=false",
        data=json.dumps(records["empty"]),
        content_type="application/json; charset=utf-8",
    )
    assert single.status_code == 201
    assert Job.objects.filter(kind="evaluate_trajectory").count() == 1  # evaluate=false


def test_a_real_swe_agent_file_imports_with_a_model_name(client, bob, task):
    client.force_login(bob)
    body = (fx.REAL_FORMATS / "swe-agent/test-repo-i1.traj").read_bytes()
    response = client.post(
        f"{URL}?task={task.pk}&model=swe-agent-gpt4", data=body, content_type="application/json"
    )
    assert response.status_code == 201
    (created,) = response.json()["created"]
    assert (created["model"], created["steps"], created["line"]) == ("swe-agent-gpt4", 12, None)
    without = client.post(
        f"{URL}?task={task.pk}&format=swe-agent",
        data=(fx.REAL_FORMATS / "swe-agent/function_calling_simple.traj").read_bytes(),
        content_type="application/json",
    )
    assert without.status_code == 400
    assert "names no model" in error_of(without)["details"]["errors"][0]["message"]


def test_tokens_need_the_write_scope_and_the_curator_role(client, alice, bob, task):
    body = _jsonl([fx.ledger_records(task)["empty"]])
    read_only = client.post(URL, data=body, content_type=NDJSON, **_bearer(bob, "read"))
    assert read_only.status_code == 403
    write = client.post(URL, data=body, content_type=NDJSON, **_bearer(bob, "write"))
    assert write.status_code == 201, write.content
    # A reviewer may read trajectories but not import them.
    reviewer = client.post(URL, data=body, content_type=NDJSON, **_bearer(alice, "write"))
    assert reviewer.status_code == 403
    assert reviewer.json()["error"]["code"] == "permission_denied"


def test_outsiders_and_strangers_are_refused(client, carol, task):
    body = _jsonl([fx.ledger_records(task)["empty"]])
    assert client.post(URL, data=body, content_type=NDJSON).status_code == 401
    client.force_login(carol)
    assert client.post(URL, data=body, content_type=NDJSON).status_code == 403
    assert client.get(URL).status_code == 403
    assert Trajectory.objects.count() == 0


@pytest.mark.parametrize(
    ("query", "content_type", "body", "status", "field"),
    [
        ("", "text/csv", b"a,b\n", 415, None),
        ("", NDJSON, b"", 400, "body"),
        ("?task=abc", NDJSON, b"{}", 400, "task"),
        ("?task=-3", NDJSON, b"{}", 400, "task"),
        ("?format=csv", NDJSON, b"{}", 400, "format"),
        ("?evaluate=perhaps", NDJSON, b"{}", 400, "evaluate"),
        ("?task={task}&dataset=core", NDJSON, b"{}", 400, "task"),
        ("", "application/json", b'{"name": "x", "lockfileVersion": 3}', 400, "body"),
        ("", NDJSON, b"\x00\x01binary", 400, "body"),
    ],
)
def test_bad_input_gets_a_clear_error(client, bob, task, query, content_type, body, status, field):
    client.force_login(bob)
    response = client.post(URL + query.format(task=task.pk), data=body, content_type=content_type)
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert error["message"]
    if field:
        assert field in error["details"]


def test_unknown_or_invisible_targets_are_not_found(client, alice, bob, task):
    client.force_login(bob)
    body = _jsonl([fx.ledger_records(task)["empty"]])
    assert client.post(f"{URL}?task=999999", data=body, content_type=NDJSON).status_code == 404
    assert client.post(f"{URL}?dataset=nope", data=body, content_type=NDJSON).status_code == 404


def test_a_body_over_the_limit_is_refused_with_413(client, bob, task, settings):
    settings.SPECLOOM_UPLOAD_MAX_BYTES = 1000
    client.force_login(bob)
    records = [fx.ledger_records(task)["partial"]] * 3
    response = client.post(URL, data=_jsonl(records), content_type=NDJSON)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"
    assert Trajectory.objects.count() == 0


def test_wrong_methods_are_refused(client, bob, task):
    client.force_login(bob)
    trajectory = Trajectory.objects.create(
        task=task, model_name="m", source_format="specloom", content_sha256="a" * 64
    )
    detail = f"{URL}/{trajectory.pk}"
    assert client.put(detail, data={}, content_type="application/json").status_code == 405
    assert client.patch(detail, data={}, content_type="application/json").status_code == 405
    assert client.delete(detail).status_code == 405
    assert client.post(f"{detail}/steps").status_code == 405
    assert client.get(f"{detail}/evaluate").status_code == 405
    assert client.delete(URL).status_code == 405


def test_lists_and_details_show_only_visible_tasks(client, alice, task):
    other = TaskFactory(dataset=DatasetFactory(name="private"))
    mine = Trajectory.objects.create(
        task=task, model_name="m1", source_format="specloom", content_sha256="a" * 64
    )
    hidden = Trajectory.objects.create(
        task=other, model_name="m1", source_format="specloom", content_sha256="b" * 64
    )
    client.force_login(alice)
    listed = client.get(URL).json()
    assert [row["id"] for row in listed["results"]] == [mine.pk]
    assert listed["results"][0]["evaluation"] is None
    assert client.get(f"{URL}/{mine.pk}").json()["final_patch"] == ""
    assert client.get(f"{URL}/{hidden.pk}").status_code == 404
    assert client.get(f"{URL}/{hidden.pk}/steps").status_code == 404
    assert client.get(f"{URL}/abc/steps").status_code == 404
    assert client.get(f"{URL}?model=m2").json()["results"] == []
    assert client.get(f"{URL}?task=x").status_code == 400
    assert client.get(f"{URL}?unsafe=maybe").status_code == 400


def test_a_curator_can_queue_an_evaluation_again(client, alice, bob, task):
    trajectory = Trajectory.objects.create(
        task=task, model_name="m", source_format="specloom", content_sha256="a" * 64
    )
    client.force_login(alice)
    assert client.post(f"{URL}/{trajectory.pk}/evaluate").status_code == 403
    client.force_login(bob)
    response = client.post(f"{URL}/{trajectory.pk}/evaluate")
    assert response.status_code == 202
    assert Job.objects.get(pk=response.json()["job"]).params == {"trajectory_id": trajectory.pk}


def test_five_thousand_steps_and_fifty_megabytes_import_and_read_page_by_page(client, bob, task):
    client.force_login(bob)
    chunk = "x" * 9_990
    steps = [
        {
            "role": "tool",
            "kind": "observation",
            "content": f"{i:06d}{chunk}",
            "observation": f"{i:06d}{chunk}",
        }
        for i in range(5000)
    ]
    record = fx.record(task, model="big", patch="", steps=steps)
    body = json.dumps(record).encode()
    assert len(body) > 100_000_000  # 50 MB of observations, and the same text as content
    response = client.post(
        f"{URL}?task={task.pk}&evaluate=false", data=body, content_type="application/json"
    )
    assert response.status_code == 201, response.content[:500]
    trajectory_id = response.json()["created"][0]["id"]
    assert TrajectoryStep.objects.filter(trajectory_id=trajectory_id).count() == 5000

    seen = []
    url = f"{URL}/{trajectory_id}/steps?page_size=500"
    pages = 0
    while url:
        page = client.get(url).json()
        pages += 1
        seen += [step["index"] for step in page["results"]]
        assert all(len(step["observation"]) == 9_996 for step in page["results"])
        url = page["next"]
    assert pages == 10
    assert seen == list(range(5000))
    tail = client.get(f"{URL}/{trajectory_id}/steps?from_index=4990").json()
    assert [step["index"] for step in tail["results"]] == list(range(4990, 5000))
    assert tail["results"][0]["content"].startswith("004990")


def test_a_file_of_junk_gets_a_small_400_with_the_first_errors_and_a_count(client, bob, task):
    client.force_login(bob)
    lines = 5_000
    body = b"".join(b'{"junk": %d}\n' % n for n in range(lines))
    response = client.post(f"{URL}?dataset=core&format=specloom", data=body, content_type=NDJSON)
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "bad_request"
    assert f"{lines} records failed" in error["message"]
    report = error["details"]
    assert report["counts"]["errors"] == lines
    assert [e["line"] for e in report["errors"]] == list(range(1, 101))
    assert report["errors_omitted"] == lines - 100
    assert len(response.content) < 30_000


def test_a_400_for_record_errors_has_the_error_body(client, bob, task):
    client.force_login(bob)
    response = client.post(
        f"{URL}?task={task.pk}", data=b'{"format": "specloom"}\n', content_type=NDJSON
    )
    assert response.status_code == 400
    error = error_of(response)
    assert error["details"]["counts"]["created"] == 0
    assert error["details"]["errors"][0]["line"] == 1


def test_a_binary_upload_is_named_the_upload_not_a_server_path(client, bob, task):
    client.force_login(bob)
    response = client.post(f"{URL}?task={task.pk}", data=b"\x00\x01\x02binary", content_type=NDJSON)
    assert response.status_code == 400
    error = error_of(response)
    text = json.dumps(error)
    assert "the upload is binary data" in text
    assert "/tmp" not in text and "specloom-import" not in text
