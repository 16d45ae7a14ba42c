"""Other layouts of the same formats (tests/fixtures/formats/variants) import too."""

import json
from pathlib import Path

import pytest

from curation.ingest import detect_format

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "formats"

AGENT_TURN = [("assistant", "action"), ("tool", "observation")]


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        ("variants/swe-agent/v1-replay-config.traj", "swe-agent"),
        ("variants/swe-agent/v0-no-thought/pvlib__pvlib-python-1072.traj", "swe-agent"),
        ("variants/swe-agent/history-only-with-info.traj", "swe-agent"),
        ("variants/openhands/events-legacy.json", "openhands"),
        ("variants/openhands/eval-legacy.jsonl", "openhands-eval"),
        ("variants/openhands/resolver-output.jsonl", "openhands-resolver"),
        ("variants/predictions/preds-keyed.json", "predictions"),
        ("variants/predictions/preds-keyed-compact.json", "predictions"),
        ("variants/predictions/all_preds.jsonl", "predictions"),
        ("variants/predictions/single-prediction.json", "predictions"),
        ("variants/predictions/mixed-good-and-bad.jsonl", "predictions"),
        ("variants/specloom/single-record.json", "specloom"),
        ("variants/specloom/list-with-one-bad.json", "specloom"),
        ("variants/specloom/records.jsonl", "specloom"),
    ],
)
def test_detects_the_format_of_each_variant(fixture_path, relative, expected):
    assert detect_format(fixture_path(relative)) == expected


# --- SWE-agent ---


def test_swe_agent_1x_names_model_and_instance_in_replay_config(fixture_path, parse_one, shape):
    path = fixture_path("variants/swe-agent/v1-replay-config.traj")
    trajectory = parse_one(path)

    assert trajectory.model == "claude-3-7-sonnet-20250219"
    assert trajectory.instance_id == "astropy__astropy-12907"
    assert trajectory.metadata["instance_id_source"] == "replay_config"
    assert trajectory.exit_status == "submitted"
    assert trajectory.final_patch == json.loads(path.read_text())["info"]["submission"]
    assert trajectory.cost_usd == pytest.approx(0.0421)
    assert (trajectory.tokens_in, trajectory.tokens_out) == (12034, 512)
    assert trajectory.metadata["info"]["swe_agent_version"] == "1.0.1"
    assert trajectory.metadata["demonstrations_skipped"] == 1

    assert shape(trajectory) == [("system", "message"), ("user", "message")] + AGENT_TURN * 3
    task = trajectory.steps[1]
    assert task.content.startswith("<uploaded_files>")  # joined from a list of text parts
    edit = trajectory.steps[4]
    assert edit.tool == "str_replace_editor"
    assert edit.extra["execution_time"] == 0.35
    assert edit.extra["state"]["open_file"] == "/testbed/src/units/core.py"
    # The full prompt of each step ("query") is not copied into every step.
    assert all("query" not in step.extra for step in trajectory.steps)


def test_swe_agent_0x_steps_without_thought(fixture_path, parse_one, shape):
    trajectory = parse_one(
        fixture_path("variants/swe-agent/v0-no-thought/pvlib__pvlib-python-1072.traj")
    )

    assert trajectory.model is None
    assert trajectory.instance_id == "pvlib__pvlib-python-1072"  # SWE-agent names files so
    assert trajectory.metadata["instance_id_source"] == "file_name"
    assert trajectory.exit_status == "exit_cost"
    assert trajectory.final_patch is None
    # instance_cost, not total_cost: the latter is the running total of the whole batch.
    assert trajectory.cost_usd == pytest.approx(3.01)
    assert trajectory.metadata["model_stats"]["total_cost"] == 12.5
    assert (trajectory.tokens_in, trajectory.tokens_out) == (401234, 2345)

    assert shape(trajectory) == [("system", "message"), ("user", "message")] + AGENT_TURN * 2
    first_action = trajectory.steps[2]
    assert first_action.thought is None
    assert first_action.content.startswith("DISCUSSION\nFirst list the repository.")
    assert first_action.action == "ls\n"
    assert first_action.tool == "ls"
    assert trajectory.steps[3].observation == "README.md\nsetup.py\nsrc\n"


def test_swe_agent_history_only_with_info(fixture_path, parse_one, shape):
    trajectory = parse_one(fixture_path("variants/swe-agent/history-only-with-info.traj"))

    assert trajectory.metadata["step_source"] == "history"
    assert trajectory.exit_status == "submitted (exit_context)"
    assert trajectory.final_patch == "diff --git a/hello.py b/hello.py\n"
    assert trajectory.cost_usd == pytest.approx(0.12)
    # Classic agents answer with user messages; after the first agent turn they are output.
    assert shape(trajectory) == [("system", "message"), ("user", "message")] + AGENT_TURN * 2
    assert [step.tool for step in trajectory.steps[2:]] == ["search_dir"] * 2 + ["submit"] * 2
    assert trajectory.steps[2].thought == "Let me search."


# --- OpenHands ---


def test_openhands_legacy_events(fixture_path, parse_one, shape):
    trajectory = parse_one(fixture_path("variants/openhands/events-legacy.json"))

    assert trajectory.model is None  # no LLM response metadata in this older file
    assert trajectory.cost_usd == pytest.approx(0.0301)  # the last llm_metrics total
    assert trajectory.tokens_in is None and trajectory.tokens_out is None
    assert trajectory.exit_status == "finished"  # the last agent_state_changed
    assert trajectory.metadata["skipped_events"] == {
        "observation:agent_state_changed": 3,
        "action:change_agent_state": 1,
    }
    assert shape(trajectory) == [
        ("user", "message"),
        *AGENT_TURN * 3,
        ("assistant", "message"),
        ("assistant", "action"),
    ]
    run, output, ipython, ipython_output, _, error = trajectory.steps[1:7]
    assert run.action == "cat cli.py"
    assert run.thought == "Let me read the CLI first."
    assert run.tool == "run"
    assert output.observation.startswith("import argparse")
    assert output.extra["exit_code"] == 0
    assert ipython.action.startswith("print(open('cli.py')")
    assert ipython_output.tool == "run_ipython"
    assert error.extra["error"] is True
    assert error.content == "Command timed out after 120 seconds"
    finish = trajectory.steps[-1]
    assert (finish.action, finish.thought) == ("finish", "All done!")


def test_openhands_eval_with_action_observation_pairs(fixture_path, parse_all, shape):
    trajectories, errors = parse_all(fixture_path("variants/openhands/eval-legacy.jsonl"))
    assert errors == []
    flask, requests, sympy = trajectories
    assert [item.line for item in trajectories] == [1, 2, 3]

    assert flask.instance_id == "pallets__flask-4992"
    assert flask.model == "gpt-4o-2024-05-13"
    assert flask.cost_usd == pytest.approx(0.3152)
    assert flask.final_patch.startswith("diff --git a/src/p.py")
    assert flask.exit_status == "finished"
    # Pairs are flattened; the "null" observations answering messages are not steps.
    assert shape(flask) == [("user", "message"), *AGENT_TURN, ("assistant", "action")]
    assert flask.metadata["skipped_events"] == {"observation:null": 2}
    assert flask.metadata["llm_config"] == {"model": "gpt-4o-2024-05-13", "temperature": 0.0}
    assert "sk-should-not-be-kept" not in json.dumps(flask.metadata)

    # OpenDevin era: metadata.model_name, a top-level git_patch, swe_instance, an error.
    assert requests.model == "gpt-4-turbo-2024-04-09"
    assert requests.final_patch == "diff --git a/requests/sessions.py b/requests/sessions.py\n"
    assert requests.exit_status == "error"
    assert requests.metadata["error"] == "Agent got stuck in a loop"
    assert requests.metadata["instance"]["repo"] == "psf/requests"
    assert requests.cost_usd == pytest.approx(1.25)
    assert shape(requests) == [("user", "message"), *AGENT_TURN]
    assert requests.steps[1].action == "sed -n 420,440p requests/sessions.py"
    assert requests.steps[1].thought is None  # an empty thought is no thought

    # A run that crashed before its first step still imports, with what it has.
    assert sympy.steps == []
    assert sympy.exit_status == "error"
    assert sympy.final_patch == ""
    assert sympy.cost_usd is None
    assert sympy.metadata["missing"] == ["history"]


# --- predictions ---


@pytest.mark.parametrize(
    "relative",
    ["variants/predictions/preds-keyed.json", "variants/predictions/preds-keyed-compact.json"],
)
def test_predictions_keyed_by_instance_id(fixture_path, parse_all, relative):
    trajectories, errors = parse_all(fixture_path(relative))
    assert errors == []
    by_id = {item.instance_id: item for item in trajectories}
    assert list(by_id) == [
        "astropy__astropy-12907",
        "django__django-11099",  # its value has no instance_id: the key names it
        "sympy__sympy-20590",
    ]
    assert {item.model for item in trajectories} == {"claude-3-7-sonnet-20250219"}
    assert by_id["django__django-11099"].final_patch.startswith("diff --git a/django/")
    assert by_id["sympy__sympy-20590"].final_patch is None  # submitted nothing


def test_keyed_and_listed_predictions_hash_alike(fixture_path, parse_all, tmp_path):
    keyed, _ = parse_all(fixture_path("variants/predictions/preds-keyed.json"))
    listed_file = tmp_path / "preds.json"
    source = json.loads(fixture_path("variants/predictions/preds-keyed.json").read_text())
    listed_file.write_text(
        json.dumps([{"instance_id": key, **value} for key, value in source.items()])
    )
    listed, _ = parse_all(listed_file)
    assert [item.content_sha256 for item in keyed] == [item.content_sha256 for item in listed]


def test_predictions_jsonl(fixture_path, parse_all):
    trajectories, errors = parse_all(fixture_path("variants/predictions/all_preds.jsonl"))
    assert errors == []
    assert [item.line for item in trajectories] == [1, 2, 3]
    assert [item.instance_id for item in trajectories] == [
        "pvlib__pvlib-python-1072",
        "pydicom__pydicom-1694",
        "marshmallow-code__marshmallow-1343",
    ]
    assert trajectories[1].final_patch == ""
    assert trajectories[0].model.startswith("gpt4__SWE-bench_Lite")


def test_single_prediction_object_keeps_extra_fields(fixture_path, parse_one):
    trajectory = parse_one(fixture_path("variants/predictions/single-prediction.json"))
    assert trajectory.instance_id == "django__django-11099"
    assert trajectory.model == "my-model"
    assert trajectory.line is None
    assert trajectory.metadata == {"cost": 0.42}
    assert trajectory.cost_usd is None  # an unspecified extra field is not trusted as cost


# --- Specloom's own format ---


def test_specloom_single_record(fixture_path, parse_one, shape):
    trajectory = parse_one(fixture_path("variants/specloom/single-record.json"))

    assert trajectory.source_format == "specloom"
    assert trajectory.instance_id == "django__django-11099"
    assert (trajectory.model, trajectory.scaffold) == ("gpt-5-mini", "in-house")
    assert trajectory.exit_status == "submitted"
    assert trajectory.cost_usd == pytest.approx(0.0375)
    assert (trajectory.tokens_in, trajectory.tokens_out) == (20345, 1290)
    assert trajectory.metadata == {"run": "nightly-2025-06-01"}
    assert shape(trajectory) == [
        ("system", "message"),
        ("user", "message"),
        ("assistant", "thought"),
        ("assistant", "action"),
        ("tool", "observation"),
    ]
    action = trajectory.steps[3]
    assert action.tokens == 57
    assert action.timestamp == "2025-06-01T10:00:00Z"
    assert action.extra == {"latency_ms": 840}  # unknown step keys land in extra
    assert trajectory.steps[4].extra == {"exit_code": 0}


def test_specloom_list_and_jsonl(fixture_path, parse_all):
    listed, errors = parse_all(fixture_path("variants/specloom/list-with-one-bad.json"))
    assert [item.line for item in listed] == [0, 1]
    assert listed[1].instance_id == "auth-validators"  # "task" stands in for instance_id
    assert listed[1].model is None
    assert len(errors) == 1
    assert errors[0].line == 2
    assert "steps[0].role" in errors[0].message and "robot" in errors[0].message

    streamed, errors = parse_all(fixture_path("variants/specloom/records.jsonl"))
    assert errors == []
    assert [item.line for item in streamed] == [1, 2]
    assert [item.content_sha256 for item in streamed] == [item.content_sha256 for item in listed]


@pytest.mark.parametrize(
    ("record", "field"),
    [
        ({"steps": []}, "'instance_id' (or 'task')"),
        ({"instance_id": "a"}, "'steps'"),
        ({"instance_id": "a", "steps": [{"kind": "message"}]}, "'steps[0].role'"),
        ({"instance_id": "a", "steps": [{"role": "user", "kind": "chat"}]}, "'steps[0].kind'"),
        ({"instance_id": "a", "steps": [], "cost_usd": "cheap"}, "'cost_usd'"),
        ({"instance_id": "a", "steps": [], "tokens_in": -3}, "'tokens_in'"),
        ({"instance_id": "a", "steps": "none"}, "'steps'"),
        (
            {"instance_id": "a", "steps": [{"role": "user", "kind": "message", "content": 5}]},
            "'steps[0].content'",
        ),
    ],
)
def test_specloom_errors_name_the_field(tmp_path, parse_all, record, field):
    path = tmp_path / "record.jsonl"
    path.write_text(json.dumps(record) + "\n")
    trajectories, errors = parse_all(path, "specloom")
    assert trajectories == []
    assert len(errors) == 1
    assert errors[0].line == 1
    assert field in errors[0].message


def test_swe_agent_instance_is_guessed_only_from_a_traj_file_name(
    fixture_path, tmp_path, parse_one
):
    source = fixture_path("variants/swe-agent/v0-no-thought/pvlib__pvlib-python-1072.traj")
    renamed = tmp_path / "run-output.json"
    renamed.write_bytes(source.read_bytes())

    trajectory = parse_one(str(renamed), "swe-agent")  # a plain string path works too
    assert trajectory.instance_id is None
    assert "instance_id_source" not in trajectory.metadata
    assert trajectory.exit_status == "exit_cost"


# --- OpenHands resolver ---


def test_openhands_resolver_output(fixture_path, parse_all, shape):
    trajectories, errors = parse_all(fixture_path("variants/openhands/resolver-output.jsonl"))
    assert errors == []
    issue, review = trajectories
    assert (issue.source_format, issue.instance_id, issue.line) == (
        "openhands-resolver",
        "acme__ledger-42",
        1,
    )
    # No model in the file but in its LLM responses ("default" in the metrics is a placeholder).
    assert issue.model == "claude-3-5-sonnet-20241022"
    assert shape(issue) == [("user", "message"), *AGENT_TURN, *AGENT_TURN, ("assistant", "action")]
    assert issue.final_patch.startswith("diff --git a/src/ledger/balance.py")
    assert (issue.exit_status, issue.cost_usd, issue.tokens_in, issue.tokens_out) == (
        "finished",
        0.0309,
        7200,
        285,
    )
    assert issue.metadata["issue"]["number"] == 42
    assert issue.metadata["success"] is True
    assert "raise ValueError" in issue.metadata["result_explanation"]

    assert (review.instance_id, review.model, review.steps, review.final_patch) == (
        "acme__ledger-57",
        None,
        [],
        "",
    )
    assert review.exit_status == "error"
    assert review.metadata["issue_type"] == "pr"
    assert review.metadata["comment_success"] == [False]
    assert "stopped before" in review.metadata["result_explanation"]
    assert "maximum iteration" in review.metadata["error"]


def test_openhands_resolver_output_as_a_json_list_and_with_an_instance_id(tmp_path, parse_all):
    lines = (FIXTURES / "variants/openhands/resolver-output.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    records[0]["instance_id"] = "specloom__ledger-3"
    path = tmp_path / "output.json"
    path.write_text(json.dumps(records, indent=2))
    assert detect_format(path) == "openhands-resolver"
    trajectories, errors = parse_all(path)
    assert errors == []
    assert [t.instance_id for t in trajectories] == ["specloom__ledger-3", "acme__ledger-57"]


def test_an_openhands_resolver_record_without_an_issue_is_an_error(tmp_path, parse_all):
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps({"issue": {"title": "x"}, "issue_type": "issue"}) + "\n")
    trajectories, errors = parse_all(path)
    assert trajectories == []
    assert "'owner', 'repo' and 'number'" in errors[0].message
