"""Bad input becomes clear RecordErrors (or UnknownFormatError when undetectable), never a crash."""

import gzip
import json
import time

import pytest

from curation.ingest import FORMATS, RecordError, UnknownFormatError, detect_format, iter_records


def test_jsonl_reports_each_bad_line_and_keeps_going(fixture_path, parse_all):
    trajectories, errors = parse_all(fixture_path("variants/predictions/mixed-good-and-bad.jsonl"))

    assert [(item.line, item.instance_id) for item in trajectories] == [
        (1, "a__a-1"),
        (9, "a__a-9"),
    ]
    by_line = {error.line: error.message for error in errors}
    assert sorted(by_line) == [2, 4, 5, 6, 7, 8, 10]  # line 3 is blank and skipped
    assert by_line[2].startswith("invalid JSON")
    assert "list" in by_line[4]
    assert by_line[5] == "missing required field 'model_patch'"
    assert by_line[6] == "missing required field 'instance_id'"
    assert "'model_patch' must be a string or null" in by_line[7]
    assert by_line[8].startswith("invalid JSON at column 1")
    assert "truncated" in by_line[10]
    assert str(errors[0]).startswith("line 2: invalid JSON")


def test_outcomes_come_in_file_order(fixture_path):
    outcomes = list(iter_records(fixture_path("variants/predictions/mixed-good-and-bad.jsonl")))
    assert [item.line for item in outcomes] == [1, 2, 4, 5, 6, 7, 8, 9, 10]


@pytest.mark.parametrize("content", [b"", b"   \n\n\t  \n"])
def test_empty_file(tmp_path, parse_all, content):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(content)
    with pytest.raises(UnknownFormatError, match="empty"):
        detect_format(path)
    with pytest.raises(UnknownFormatError, match="empty"):
        iter_records(path)
    for fmt in FORMATS:
        trajectories, errors = parse_all(path, fmt)
        assert trajectories == []
        assert [(error.line, error.message) for error in errors] == [(None, "the file is empty")]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (bytes(range(256)) * 8, "binary"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
        (gzip.compress(b'{"instance_id": "a", "model_patch": ""}\n'), "gzip"),
        ('{"instance_id": "caf\xe9"}'.encode("latin-1"), "not UTF-8"),
        (b"instance_id,model_patch\na,diff\n", "not JSON"),
        (b"# Trajectory\n\nSome markdown.\n", "not JSON"),
        (b"42\n", "not JSON"),
    ],
)
def test_garbage_is_undetectable_with_a_clear_reason(tmp_path, content, reason):
    path = tmp_path / "garbage.jsonl"
    path.write_bytes(content)
    with pytest.raises(UnknownFormatError, match=reason) as raised:
        detect_format(path)
    assert "Supported formats: specloom" in str(raised.value)


@pytest.mark.parametrize("fmt", FORMATS)
def test_garbage_with_an_explicit_format_is_a_record_error(tmp_path, parse_all, fmt):
    path = tmp_path / "garbage.bin"
    path.write_bytes(bytes(range(256)) * 64)
    trajectories, errors = parse_all(path, fmt)
    assert trajectories == []
    assert len(errors) == 1
    assert errors[0].line is None
    assert "JSON" in errors[0].message


def test_unknown_json_names_what_it_saw(fixture_path):
    with pytest.raises(UnknownFormatError) as raised:
        detect_format(fixture_path("variants/unknown/package-lock.json"))
    message = str(raised.value)
    assert "package-lock.json" in message
    assert "'lockfileVersion'" in message
    for fmt in FORMATS:
        assert fmt in message


def test_unknown_format_name_is_refused(fixture_path):
    with pytest.raises(UnknownFormatError, match="unknown format 'trajectory-v9'"):
        iter_records(fixture_path("real/openhands/events-basic.json"), "trajectory-v9")


@pytest.mark.parametrize(
    ("relative", "fmt"),
    [
        ("real/swe-agent/test-repo-i1.traj", "swe-agent"),
        ("real/openhands/events-basic.json", "openhands"),
        ("real/swe-bench/predictions-example.json", "predictions"),
        ("variants/predictions/preds-keyed.json", "predictions"),
        ("variants/specloom/single-record.json", "specloom"),
    ],
)
def test_truncated_document_is_detected_and_reported(
    fixture_path, tmp_path, parse_all, relative, fmt
):
    data = fixture_path(relative).read_bytes()
    path = tmp_path / fixture_path(relative).name
    path.write_bytes(data[: len(data) * 2 // 3])

    assert detect_format(path) == fmt  # the head is intact
    trajectories, errors = parse_all(path)
    assert trajectories == []
    assert len(errors) == 1
    assert errors[0].line is None
    assert "truncated" in errors[0].message


def test_truncated_single_line_jsonl(fixture_path, tmp_path, parse_all):
    data = fixture_path("real/openhands/eval-output-one.jsonl").read_bytes()
    path = tmp_path / "output.jsonl"
    path.write_bytes(data[:150_000])
    assert detect_format(path) == "openhands-eval"
    trajectories, errors = parse_all(path)
    assert trajectories == []
    assert [error.line for error in errors] == [1]
    assert "truncated" in errors[0].message


@pytest.mark.parametrize(
    ("relative", "wrong_format", "expected"),
    [
        ("real/swe-bench/predictions-example.json", "swe-agent", "holds a list"),
        ("real/swe-agent/test-repo-i1.traj", "openhands", "holds a dict"),
        ("real/openhands/events-basic.json", "predictions", "missing required field"),
        ("real/swe-agent/test-repo-i1.traj", "openhands-eval", "'instance_id'"),
        ("real/openhands/eval-output-one.jsonl", "specloom", "'steps'"),
    ],
)
def test_wrong_explicit_format_is_a_record_error(
    fixture_path, parse_all, relative, wrong_format, expected
):
    trajectories, errors = parse_all(fixture_path(relative), wrong_format)
    assert trajectories == []
    assert errors
    assert expected in errors[0].message


@pytest.mark.parametrize(
    ("fmt", "document", "expected"),
    [
        ("swe-agent", {"trajectory": "oops"}, "'trajectory' must be a list"),
        ("swe-agent", {"trajectory": [1, 2]}, "trajectory[0] is not an object"),
        (
            "swe-agent",
            {"info": {"exit_status": "submitted"}},
            "missing required field 'trajectory'",
        ),
        ("openhands", [{"id": 0, "action": "message"}, 7], "events[1]"),
        ("openhands", {"events": []}, "holds a dict"),
        ("openhands-eval", [{"instance_id": "a", "history": [1]}], "history[0]"),
        ("openhands-eval", [{"instance_id": "a", "history": "x"}], "'history' must be a list"),
        ("openhands-eval", [{"history": []}], "missing required field 'instance_id'"),
        ("predictions", [{"instance_id": "", "model_patch": ""}], "non-empty"),
        ("predictions", {"a__a-1": "diff"}, "missing required field 'instance_id'"),
        ("predictions", {"a__a-1": {"model_patch": 3}}, "prediction 'a__a-1': 'model_patch'"),
    ],
)
def test_malformed_structures_are_record_errors(tmp_path, parse_all, fmt, document, expected):
    path = tmp_path / "input.json"
    path.write_text(json.dumps(document))
    trajectories, errors = parse_all(path, fmt)
    assert trajectories == []
    assert len(errors) == 1
    assert expected in errors[0].message


def test_odd_value_types_do_not_crash(tmp_path, parse_one):
    path = tmp_path / "odd.traj"
    path.write_text(
        json.dumps(
            {
                "trajectory": [{"action": None, "observation": None, "thought": 3, "state": 5}],
                "history": [{"role": "system", "content": {"not": "text"}}],
                "info": {"exit_status": 1, "submission": ["x"], "model_stats": "free"},
                "replay_config": "{not json",
            }
        )
    )
    trajectory = parse_one(path)
    assert trajectory.exit_status is None
    assert trajectory.final_patch is None
    assert trajectory.cost_usd is None
    assert [step.content for step in trajectory.steps] == ["", "", ""]


def test_python_style_nan_and_bom_are_accepted(tmp_path, parse_one):
    path = tmp_path / "nan.traj"
    document = {"trajectory": [], "info": {"model_stats": {"instance_cost": float("nan")}}}
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(document).encode())  # json writes NaN
    assert detect_format(path) == "swe-agent"
    trajectory = parse_one(path)
    assert trajectory.steps == []
    assert trajectory.cost_usd != trajectory.cost_usd  # NaN, as the file says


def test_crlf_jsonl(tmp_path, parse_all):
    path = tmp_path / "preds.jsonl"
    lines = [
        {"instance_id": f"a__a-{n}", "model_patch": "", "model_name_or_path": "m"} for n in (1, 2)
    ]
    path.write_bytes(b"\r\n".join(json.dumps(line).encode() for line in lines) + b"\r\n")
    trajectories, errors = parse_all(path)
    assert errors == []
    assert [item.line for item in trajectories] == [1, 2]


def test_detection_reads_only_the_head_of_a_huge_first_record(tmp_path):
    # One eval record of ~3 MB on one line, larger than the sniffed head.
    record = {
        "instance_id": "big__big-1",
        "instruction": "x",
        "history": [
            {"id": n, "source": "agent", "observation": "run", "content": "y" * 30_000}
            for n in range(100)
        ],
    }
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert detect_format(path) == "openhands-eval"


def test_detection_is_fast_when_the_head_ends_inside_a_long_string(tmp_path):
    # A single-line document whose first string runs past the head and is full of escaped
    # quotes: a backtracking scanner would take quadratic time here.
    path = tmp_path / "events.json"
    path.write_text(json.dumps([{"id": 0, "action": "run", "message": '"' * 2_000_000}]))
    started = time.perf_counter()
    assert detect_format(path) == "openhands"
    assert time.perf_counter() - started < 2


def test_errors_are_record_errors_not_strings(fixture_path):
    outcomes = list(iter_records(fixture_path("variants/predictions/mixed-good-and-bad.jsonl")))
    assert all(hasattr(item, "line") for item in outcomes)
    assert any(isinstance(item, RecordError) for item in outcomes)
