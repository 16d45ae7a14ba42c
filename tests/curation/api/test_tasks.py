"""/api/v1/tasks: nested content, visibility, filters, creation and the streaming export."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from curation.models import Task
from tests.curation.api.support import error_of
from tests.curation.release_helpers import ODD_NODEID, evaluated_trajectory, reviewed_task
from tests.curation.tasks_fixtures import sample_repository
from tests.factories import DatasetFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def tasks(dataset):
    other = DatasetFactory(name="other")
    return {
        "approved": reviewed_task(dataset=dataset),
        "draft": reviewed_task(dataset=dataset, status="draft", origin="llm"),
        "hidden": reviewed_task(dataset=other),
    }


def _stream(response) -> list[dict]:
    body = b"".join(response.streaming_content)
    return [json.loads(line) for line in body.splitlines()]


def test_it_lists_tasks_with_specs_graph_and_tests(token_client, alice, tasks):
    response = token_client(alice).get("/api/v1/tasks")
    assert response.status_code == 200
    body = response.json()
    assert [t["instance_id"] for t in body["results"]] == [
        tasks["approved"].instance_id,
        tasks["draft"].instance_id,
    ]
    task = body["results"][0]
    assert task["dataset"] == "core"
    assert [s["key"] for s in task["specs"]] == ["S1", "S2"]
    assert task["dependencies"] == [
        {"from": "S1", "to": "S2", "relation": "constrains", "evidence": "declared", "detail": ""}
    ]
    assert task["tests"][0]["nodeid"] == ODD_NODEID
    assert task["tests"][0]["specs"] == ["S1", "S2"]
    assert task["tests"][0]["role"] == "FAIL_TO_PASS"
    assert "next" in body and "previous" in body


def test_it_lists_in_a_fixed_number_of_queries(token_client, bob, dataset):
    for _ in range(3):
        reviewed_task(dataset=dataset)
    client = token_client(bob)
    client.get("/api/v1/tasks")  # the token's first use records its time; not counted
    with CaptureQueriesContext(connection) as few:
        client.get("/api/v1/tasks")
    for _ in range(5):
        reviewed_task(dataset=dataset)
    with CaptureQueriesContext(connection) as more:
        assert client.get("/api/v1/tasks").status_code == 200
    assert len(more) == len(few)


def test_curators_see_every_dataset_and_outsiders_nothing(token_client, bob, carol, client, tasks):
    assert len(token_client(bob).get("/api/v1/tasks").json()["results"]) == 3
    client.force_login(carol)
    assert client.get("/api/v1/tasks").status_code == 403


def test_a_task_of_another_dataset_is_a_404(token_client, alice, tasks):
    response = token_client(alice).get(f"/api/v1/tasks/{tasks['hidden'].pk}")
    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"
    assert token_client(alice).get(f"/api/v1/tasks/{tasks['approved'].pk}").status_code == 200


def test_it_filters_by_status_origin_and_dataset(token_client, bob, tasks):
    client = token_client(bob)
    results = client.get("/api/v1/tasks", {"status": "approved", "dataset": "core"}).json()
    assert [t["id"] for t in results["results"]] == [tasks["approved"].pk]
    results = client.get("/api/v1/tasks?origin=llm").json()["results"]
    assert [t["id"] for t in results] == [tasks["draft"].pk]
    both = client.get("/api/v1/tasks?status=approved&status=draft&dataset=core").json()
    assert len(both["results"]) == 2


def test_an_unknown_filter_is_a_400_naming_it(token_client, bob, tasks):
    response = token_client(bob).get("/api/v1/tasks?stauts=approved")
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "bad_request"
    assert error["details"]["unknown_parameters"] == ["stauts"]
    assert "status" in error["details"]["allowed_parameters"]


def test_a_bad_filter_value_is_a_400(token_client, bob, tasks):
    response = token_client(bob).get("/api/v1/tasks?status=finished")
    assert response.status_code == 400
    assert "status" in error_of(response)["details"]
    assert token_client(bob).get("/api/v1/tasks?created_after=yesterday").status_code == 400


def test_it_pages_with_a_cursor(token_client, bob, dataset):
    made = [reviewed_task(dataset=dataset).pk for _ in range(5)]
    client = token_client(bob)
    first = client.get("/api/v1/tasks?page_size=2").json()
    second = client.get(first["next"]).json()
    assert [t["id"] for t in first["results"] + second["results"]] == made[:4]
    # A cursor the API never handed out names no page.
    response = client.get("/api/v1/tasks?cursor=not-a-cursor")
    assert response.status_code == 404
    assert "cursor" in error_of(response)["message"]


@pytest.mark.parametrize(
    "query",
    [
        "page_size=2&page_size=3",
        "page_size=null",
        "page_size=null&page_size=null",
        "cursor=a&cursor=b",
    ],
)
@pytest.mark.parametrize("path", ["/api/v1/tasks", "/api/v1/trajectories/{id}/steps"])
def test_a_repeated_or_null_page_parameter_is_refused(token_client, bob, dataset, query, path):
    from tests.curation.release_helpers import evaluated_trajectory

    task = reviewed_task(dataset=dataset)
    trajectory = evaluated_trajectory(task, model="m", resolved="full")
    response = token_client(bob).get(f"{path.format(id=trajectory.pk)}?{query}")
    assert response.status_code == 400, response.content
    assert error_of(response)["code"] == "bad_request"


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/trajectories?task=1&task=2",
        "/api/v1/trajectories?model=a&model=b",
        "/api/v1/tasks?dataset=core&dataset=core",
        "/api/v1/tasks/export?format=swebench&format=specloom",
        "/api/v1/tasks/export?trajectories=true&trajectories=false",
        "/api/v1/pass-rates?dataset=core&dataset=core",
        "/api/v1/evaluation-matrix?task=-1",
        "/api/v1/audits?task=99999999999999999999999",
        "/api/v1/pass-rates?dataset=core&colour=blue",
        "/api/v1/trajectories?modle=gpt",
        "/api/v1/audit-calibration?datset=core",
    ],
)
def test_a_parameter_given_twice_or_out_of_range_is_bad_input(token_client, bob, dataset, url):
    response = token_client(bob).get(url)
    assert response.status_code == 400, response.content


def test_it_refuses_methods_it_does_not_offer(token_client, bob, tasks):
    client = token_client(bob, "write")
    response = client.put(f"/api/v1/tasks/{tasks['approved'].pk}", {}, format="json")
    assert response.status_code == 405
    assert error_of(response)["code"] == "method_not_allowed"
    assert client.delete(f"/api/v1/tasks/{tasks['approved'].pk}").status_code == 405


# --- Creating -------------------------------------------------------------------------------

NEW_TASK = {
    "dataset": "core",
    "repository": "ledger",
    "title": "Make stock never negative",
    "problem_statement": "Issuing more than the stock raises.",
    "reference_patch": (
        "diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n"
        "@@ -1 +1,2 @@\n # ledger\n+More.\n"
    ),
    "specs": [
        {"key": "S1", "kind": "functional", "statement": "Issue takes stock."},
        {"key": "S2", "kind": "error-handling", "statement": "Issuing too much raises."},
    ],
    "dependencies": [{"from": "S2", "to": "S1", "relation": "constrains"}],
    "tests": [
        {
            "nodeid": "tests/test_stock.py::TestApply::test_issue_takes_stock",
            "intended_role": "FAIL_TO_PASS",
            "specs": ["S1", "S2"],
        }
    ],
}


def test_a_curator_creates_a_task_with_a_write_token(token_client, bob, dataset, repo_storage):
    sample_repository("ledger")
    response = token_client(bob, "write").post("/api/v1/tasks", NEW_TASK, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["status"] == "draft" and body["origin"] == "manual"
    assert body["dependencies"][0]["from"] == "S2"
    assert body["tests"][0]["specs"] == ["S1", "S2"]
    assert Task.objects.get(pk=body["id"]).created_by == bob


def test_creating_needs_the_curator_role_and_the_write_scope(token_client, alice, bob, dataset):
    for client in (token_client(alice, "write"), token_client(bob, "read")):
        response = client.post("/api/v1/tasks", NEW_TASK, format="json")
        assert response.status_code == 403
        assert error_of(response)["code"] == "permission_denied"


def test_bad_task_input_gets_a_400_saying_what_is_wrong(token_client, bob, dataset, repo_storage):
    sample_repository("ledger")
    client = token_client(bob, "write")
    response = client.post("/api/v1/tasks", {**NEW_TASK, "specs": "nope"}, format="json")
    assert response.status_code == 400
    assert "specs" in error_of(response)["details"]
    bad_dep = {**NEW_TASK, "dependencies": [{"from": "S1", "to": "S9"}]}
    response = client.post("/api/v1/tasks", bad_dep, format="json")
    assert response.status_code == 400
    assert "unknown spec" in str(error_of(response)["details"])
    # A dataset you cannot see, or a repository that does not exist: 404, as everywhere.
    response = client.post("/api/v1/tasks", {**NEW_TASK, "dataset": "nope"}, format="json")
    assert response.status_code == 404
    assert "No dataset named 'nope'" in error_of(response)["message"]
    response = client.post("/api/v1/tasks", {**NEW_TASK, "repository": "nope"}, format="json")
    assert response.status_code == 404
    # A form cannot carry a task's nested specs and tests: JSON only.
    response = client.post("/api/v1/tasks", {"title": "x"})
    assert response.status_code == 415
    response = client.post("/api/v1/tasks", data="{not json", content_type="application/json")
    assert response.status_code == 400
    assert error_of(response)["code"] == "bad_request"


# --- The streaming export ---------------------------------------------------------------------


def test_it_streams_the_filtered_tasks_as_specloom_jsonl(token_client, alice, tasks):
    response = token_client(alice).get("/api/v1/tasks/export?status=approved")
    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"] == "application/x-ndjson"
    (record,) = _stream(response)
    assert record["instance_id"] == tasks["approved"].instance_id
    assert record["tests"][0]["nodeid"] == ODD_NODEID
    assert record["FAIL_TO_PASS"] == [ODD_NODEID]
    assert record["PASS_TO_PASS"] == ["tests/test_mod.py::test_old"]
    assert "trajectories" not in record


def test_it_streams_swebench_rows(token_client, bob, tasks):
    response = token_client(bob).get("/api/v1/tasks/export?format=swebench&dataset=core")
    rows = _stream(response)
    assert len(rows) == 2
    assert json.loads(rows[0]["FAIL_TO_PASS"]) == [ODD_NODEID]
    assert rows[0]["patch"] == tasks["approved"].reference_patch


def test_it_leaves_unsafe_trajectories_out_unless_asked(token_client, bob, tasks):
    task = tasks["approved"]
    evaluated_trajectory(task, model="safe", resolved="full")
    evaluated_trajectory(task, model="risky", resolved="none", unsafe=True)
    client = token_client(bob)
    url = f"/api/v1/tasks/export?instance_id={task.instance_id}&trajectories=true"
    (record,) = _stream(client.get(url))
    assert [t["model_name"] for t in record["trajectories"]] == ["safe"]
    (record,) = _stream(client.get(url + "&include_unsafe=true"))
    assert [t["model_name"] for t in record["trajectories"]] == ["risky", "safe"]


def test_the_export_refuses_bad_parameters(token_client, bob, tasks):
    client = token_client(bob)
    for query, name in (
        ("format=parquet", "format"),
        ("format=csv", "format"),
        ("trajectories=maybe", "trajectories"),
        ("include_unsafe=true", "include_unsafe"),
        ("colour=blue", "unknown_parameters"),
    ):
        response = client.get(f"/api/v1/tasks/export?{query}")
        assert response.status_code == 400, query
        assert name in error_of(response)["details"], query


def test_the_export_needs_a_role(client, carol, tasks):
    client.force_login(carol)
    assert client.get("/api/v1/tasks/export").status_code == 403
    assert client.post("/api/v1/tasks/export").status_code == 403


def test_the_export_does_not_take_post(token_client, bob, tasks):
    response = token_client(bob, "write").post("/api/v1/tasks/export")
    assert response.status_code == 405


def test_the_export_runs_a_fixed_number_of_queries_per_batch(
    token_client, bob, dataset, monkeypatch
):
    from curation.api import tasks as tasks_api

    for _ in range(7):
        reviewed_task(dataset=dataset)
    client = token_client(bob)
    counts = {}
    for batch in (100, 2):
        monkeypatch.setattr(tasks_api, "EXPORT_BATCH", batch)
        with CaptureQueriesContext(connection) as queries:
            lines = _stream(client.get("/api/v1/tasks/export"))
        assert len(lines) == 7
        counts[batch] = len(queries)
    # Four batches of 2 instead of one of 100: three more batches of four related queries
    # (specs, dependencies, tests and their specs) and, for the repositories a batch meets first
    # (here every task has its own), two (the repositories and their recipes); the task rows
    # themselves come from one cursor. Never a query per task.
    assert 12 <= counts[2] - counts[100] <= 18


def test_a_moment_with_any_offset_is_taken_in_utc(token_client, bob, tasks):
    client = token_client(bob)
    # An offset PostgreSQL refuses as such (beyond ±15:59) is valid ISO 8601: it is converted.
    response = client.get("/api/v1/tasks", {"created_after": "0181-02-14T19:26:04-16:47"})
    assert response.status_code == 200
    assert len(response.json()["results"]) == 3
    response = client.get("/api/v1/tasks", {"created_after": "0001-01-01T00:00:00+01:00"})
    assert response.status_code == 400
    assert "created_after" in error_of(response)["details"]


def test_a_head_on_the_export_runs_no_export(token_client, bob, tasks, monkeypatch):
    from curation.api import tasks as tasks_api

    def explode(*args, **kwargs):
        raise AssertionError("the export ran")

    monkeypatch.setattr(tasks_api, "task_records", explode)
    response = token_client(bob).head("/api/v1/tasks/export?format=swebench")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-ndjson"
    assert b"".join(response.streaming_content) == b""


@pytest.mark.parametrize("fmt", ["specloom", "swebench"])
def test_the_streaming_export_lines_survive_splitlines(token_client, bob, dataset, fmt):
    from tests.curation.exports.test_line_breaks_and_environment import ODD, _odd_task

    tasks = [_odd_task(dataset), _odd_task(dataset)]
    response = token_client(bob).get(f"/api/v1/tasks/export?format={fmt}&dataset=core")
    assert response.status_code == 200
    text = b"".join(response.streaming_content).decode("utf-8")
    lines = text.splitlines()
    assert len(lines) == len(tasks)
    assert json.loads(lines[1])["problem_statement"] == ODD


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/tasks",
        "/api/v1/tasks/export",
        "/api/v1/evaluations",
        "/api/v1/findings",
        "/api/v1/releases",
        "/api/v1/reviews",
        "/api/v1/trajectories",
        "/api/v1/pass-rates",
        "/api/v1/audit-calibration",
    ],
)
def test_a_dataset_you_cannot_see_is_a_404_everywhere(token_client, alice, tasks, path):
    client = token_client(alice)
    for name in ("other", "no-such-dataset"):
        response = client.get(f"{path}?dataset={name}")
        assert response.status_code == 404, (path, name)
        assert error_of(response)["code"] == "not_found"
    assert client.get(f"{path}?dataset=core").status_code == 200


def test_an_unrated_difficulty_is_null_as_the_schema_says(token_client, alice, dataset):
    from curation.models import Task

    task = reviewed_task(dataset=dataset)
    Task.objects.filter(pk=task.pk).update(difficulty="")
    client = token_client(alice)
    assert client.get(f"/api/v1/tasks/{task.pk}").json()["difficulty"] is None
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    difficulty = schema["components"]["schemas"]["Task"]["properties"]["difficulty"]
    assert difficulty.get("nullable") is True


def test_the_schema_describes_the_parameters_constraints(token_client, alice):
    schema = token_client(alice).get("/api/schema/", HTTP_ACCEPT="application/json").json()
    paths = schema["paths"]

    def parameter(path, name, method="get"):
        (found,) = [p for p in paths[path][method]["parameters"] if p["name"] == name]
        return found

    assert parameter("/api/v1/audits", "task")["schema"]["minimum"] == 0
    assert parameter("/api/v1/trajectories/{id}/steps", "from_index")["schema"]["minimum"] == 0
    assert parameter("/api/v1/evaluations", "task")["schema"]["type"] == "integer"
    scope = parameter("/api/v1/pass-rates", "scope")
    assert (scope["style"], scope["explode"], scope["required"]) == ("form", True, True)
    assert (scope["schema"]["minProperties"], scope["schema"]["maxProperties"]) == (1, 1)
    options = parameter("/api/v1/tasks/export", "trajectory_options")["schema"]
    assert set(options["properties"]) == {"trajectories", "include_unsafe"}
    assert "anyOf" in options
    assert parameter("/api/v1/tasks", "page_size")["schema"]["minimum"] == 1
    target = parameter("/api/v1/trajectories", "target", method="post")["schema"]
    assert (set(target["properties"]), target["maxProperties"]) == ({"task", "dataset"}, 1)
