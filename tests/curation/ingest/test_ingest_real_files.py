"""The real files other projects produce (tests/fixtures/formats/real) import correctly."""

import json

import pytest

from curation.ingest import ParsedStep, detect_format

AGENT_TURNS = [("assistant", "action"), ("tool", "observation")]


# Every real file, with the format it is: a file added to the folder must be listed here.
REAL_FILES = {
    "real/swe-agent/test-repo-i1.traj": "swe-agent",
    "real/swe-agent/function_calling_simple.traj": "swe-agent",
    "real/openhands/events-basic.json": "openhands",
    "real/openhands/eval-output-one.jsonl": "openhands-eval",
    "real/swe-bench/predictions-example.json": "predictions",
}


def test_detects_the_format_of_each_real_file(fixture_path):
    real = fixture_path("real/swe-agent/test-repo-i1.traj").parents[1]
    on_disk = {f"real/{p.relative_to(real)}" for p in real.rglob("*") if p.is_file()}
    assert on_disk == set(REAL_FILES)
    detected = {relative: detect_format(fixture_path(relative)) for relative in REAL_FILES}
    assert detected == REAL_FILES


def test_classic_swe_agent_traj(fixture_path, parse_one, shape):
    path = fixture_path("real/swe-agent/test-repo-i1.traj")
    source = json.loads(path.read_text())
    trajectory = parse_one(path)

    assert trajectory.source_format == "swe-agent"
    assert trajectory.scaffold == "swe-agent"
    assert trajectory.model is None  # not in the file: the importer names it
    assert trajectory.instance_id == "test-repo-i1"
    assert trajectory.metadata["instance_id_source"] == "file_name"
    assert trajectory.exit_status == "submitted"
    assert trajectory.final_patch == source["info"]["submission"]
    assert len(trajectory.final_patch) == 301
    assert trajectory.cost_usd == pytest.approx(0.53839)
    assert (trajectory.tokens_in, trajectory.tokens_out) == (52861, 326)
    assert trajectory.line is None

    # System prompt and task from history (the demonstration skipped), then five agent turns.
    assert len(trajectory.steps) == 12
    assert shape(trajectory) == [("system", "message"), ("user", "message")] + (AGENT_TURNS * 5)
    assert trajectory.metadata["demonstrations_skipped"] == 1
    actions = [step for step in trajectory.steps if step.kind == "action"]
    assert [step.action for step in actions] == [entry["action"] for entry in source["trajectory"]]
    assert [step.tool for step in actions] == ["find_file", "open", "edit", "python", "submit"]
    assert all(step.thought for step in actions)
    observations = [step for step in trajectory.steps if step.kind == "observation"]
    assert observations[-1].observation == source["trajectory"][-1]["observation"]
    assert [step.index for step in trajectory.steps] == list(range(12))


def test_function_calling_swe_agent_traj_with_history_only(fixture_path, parse_one, shape):
    trajectory = parse_one(fixture_path("real/swe-agent/function_calling_simple.traj"))

    assert trajectory.metadata["step_source"] == "history"
    assert len(trajectory.steps) == 12
    assert shape(trajectory) == [("system", "message"), ("user", "message")] + (AGENT_TURNS * 5)
    # No "info" section: nothing recorded about how the run ended, what it cost or submitted.
    assert trajectory.metadata["missing"] == ["info"]
    assert trajectory.final_patch is None
    assert trajectory.exit_status is None
    assert trajectory.cost_usd is None
    assert trajectory.tokens_in is None and trajectory.tokens_out is None
    assert trajectory.model is None
    tools = [step.tool for step in trajectory.steps[2:]]
    assert tools == [
        name for name in ("find_file", "open", "edit", "bash", "submit") for _ in (1, 2)
    ]
    assert trajectory.steps[-2].action == "submit"
    assert "diff --git a/tests/missing_colon.py" in trajectory.steps[-1].observation


def test_openhands_event_list(fixture_path, parse_one, shape):
    trajectory = parse_one(fixture_path("real/openhands/events-basic.json"))

    assert trajectory.source_format == "openhands"
    assert trajectory.model == "claude-3-5-sonnet-20241022"
    assert trajectory.instance_id is None
    assert trajectory.final_patch is None
    assert trajectory.exit_status == "finished"
    assert trajectory.cost_usd is None  # no llm_metrics in this file
    # Two LLM responses, each repeated on an action and its observation, counted once.
    assert (trajectory.tokens_in, trajectory.tokens_out) == (3486 + 4646, 1135 + 177)

    assert shape(trajectory) == [
        ("user", "message"),
        ("assistant", "action"),
        ("tool", "observation"),
        ("assistant", "action"),
    ]
    user, edit, edited, finish = trajectory.steps
    assert user.content.startswith("Please create a simple 2048 game")
    assert edit.tool == "str_replace_editor"
    assert edit.tokens == 1135
    assert edit.extra["prompt_tokens"] == 3486
    assert '"command": "create"' in edit.action
    assert edit.thought.startswith("I'll help you create a simple 2048 game")
    assert edit.timestamp == "2025-01-27T22:45:13.764487"
    assert edited.observation.startswith("--- /workspace/game_2048.py")
    assert edited.extra["cause"] == 3
    assert edited.tokens is None
    assert finish.tool == "finish"
    assert finish.action == "finish"


def test_openhands_evaluation_output(fixture_path, parse_one):
    path = fixture_path("real/openhands/eval-output-one.jsonl")
    source = json.loads(path.read_text())
    trajectory = parse_one(path)

    assert trajectory.source_format == "openhands-eval"
    assert trajectory.line == 1
    assert trajectory.instance_id == "ponylang__ponyc-4595"
    assert trajectory.model == "openai/openrouter-llama-4-maverick"
    assert trajectory.metadata["response_model"] == "meta-llama/llama-4-maverick"
    assert trajectory.final_patch == source["test_result"]["git_patch"]
    assert len(trajectory.final_patch) == 342
    assert trajectory.cost_usd == 0.0
    assert (trajectory.tokens_in, trajectory.tokens_out) == (565158, 2558)
    assert trajectory.exit_status == "finished"
    assert len(trajectory.steps) == len(source["history"]) == 49

    counts = {}
    for step in trajectory.steps:
        counts[(step.role, step.kind)] = counts.get((step.role, step.kind), 0) + 1
    assert counts == {
        ("system", "message"): 1,
        ("user", "message"): 1,
        ("user", "action"): 1,  # the recall OpenHands issues on the user's behalf
        ("tool", "observation"): 23,
        ("assistant", "action"): 22,
        ("assistant", "thought"): 1,
    }
    first_command = trajectory.steps[4]
    assert first_command.action == "ls -l /workspace/ponylang__ponyc__0.1"
    assert first_command.tool == "execute_bash"
    assert trajectory.steps[5].extra["exit_code"] == 0
    assert trajectory.metadata["agent_class"] == "CodeActAgent"
    assert trajectory.metadata["instance"]["repo"] == "ponylang/ponyc"
    assert "api_key" not in trajectory.metadata["llm_config"]


def test_swe_bench_predictions_list(fixture_path, parse_all):
    path = fixture_path("real/swe-bench/predictions-example.json")
    source = json.loads(path.read_text())
    trajectories, errors = parse_all(path)

    assert errors == []
    assert len(trajectories) == 30
    assert [item.line for item in trajectories] == list(range(30))
    assert [item.instance_id for item in trajectories] == [row["instance_id"] for row in source]
    assert [item.final_patch for item in trajectories] == [row["model_patch"] for row in source]
    assert {item.model for item in trajectories} == {"openhands"}
    assert all(item.steps == [] and item.scaffold is None for item in trajectories)
    assert sum(1 for item in trajectories if item.final_patch == "") == 4
    assert len(trajectories[0].final_patch) == 727
    assert len({item.content_sha256 for item in trajectories}) == 30


def test_steps_are_parsed_step_objects(fixture_path, parse_one):
    trajectory = parse_one(fixture_path("real/openhands/eval-output-one.jsonl"))
    for step in trajectory.steps:
        assert isinstance(step, ParsedStep)
        assert isinstance(step.content, str)
        assert step.role in {"system", "user", "assistant", "tool"}
        assert step.kind in {"message", "action", "observation", "thought"}
        assert isinstance(step.extra, dict)
