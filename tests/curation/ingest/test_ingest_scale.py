"""Large inputs stay cheap, and content hashes make re-imports recognisable."""

import gc
import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from curation.ingest import ParsedTrajectory, iter_records

PROJECT_ROOT = Path(__file__).resolve().parents[3]
REAL_FILES = [
    "real/swe-agent/test-repo-i1.traj",
    "real/swe-agent/function_calling_simple.traj",
    "real/openhands/events-basic.json",
    "real/openhands/eval-output-one.jsonl",
    "real/swe-bench/predictions-example.json",
]


def _eval_line(number: int, observation_size: int) -> bytes:
    history = []
    for turn in range(10):
        history.append(
            {
                "id": 2 * turn,
                "source": "agent",
                "action": "run",
                "args": {"command": f"cat f{turn}"},
            }
        )
        history.append(
            {
                "id": 2 * turn + 1,
                "source": "agent",
                "observation": "run",
                "cause": 2 * turn,
                "content": f"{number}:{turn}:" + "o" * observation_size,
            }
        )
    record = {
        "instance_id": f"repo__repo-{number}",
        "instruction": "fix it",
        "metadata": {"llm_config": {"model": "m"}},
        "history": history,
        "metrics": {"accumulated_cost": 0.01},
        "test_result": {"git_patch": "diff --git a/f b/f\n"},
    }
    return json.dumps(record).encode() + b"\n"


@pytest.fixture(scope="module")
def large_jsonl(tmp_path_factory):
    """About 20 MB of OpenHands evaluation output: 400 instances of ~50 KB."""
    path = tmp_path_factory.mktemp("large") / "output.jsonl"
    with path.open("wb") as handle:
        for number in range(400):
            handle.write(_eval_line(number, observation_size=5_000))
    return path


def test_large_jsonl_streams_in_bounded_memory(large_jsonl):
    file_size = large_jsonl.stat().st_size
    assert file_size > 19_000_000

    gc.collect()
    tracemalloc.start()
    try:
        count = steps = 0
        for outcome in iter_records(large_jsonl):
            assert isinstance(outcome, ParsedTrajectory)
            count += 1
            steps += len(outcome.steps)
            del outcome  # the caller stores each record and moves on
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert (count, steps) == (400, 8000)
    # One record is ~50 KB; holding the file (or even a tenth of it) would show here.
    print(f"peak {peak:,} bytes while streaming a {file_size:,}-byte file")
    assert peak < file_size / 10, f"peak {peak:,} bytes for a {file_size:,}-byte file"


# Run in a fresh interpreter so that its peak resident memory belongs to this parse alone.
# (tracemalloc is the wrong gauge for a whole document: orjson reserves a value pool many
# times the input size, which tracemalloc counts but the operating system never commits.)
_MEASURE_PARSE = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from curation.ingest import iter_records
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
[trajectory] = list(iter_records(sys.argv[2]))
seconds = time.perf_counter() - started
growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss is bytes on macOS, KiB on Linux
print(json.dumps({"steps": len(trajectory.steps), "seconds": seconds, "growth": growth * scale}))
"""


def test_five_thousand_steps_with_fifty_megabytes_of_observations(tmp_path, parse_one):
    observation = "x" * 10_000
    document = {
        "trajectory": [
            {
                "action": f"cat file_{n}.py\n",
                "observation": observation,
                "response": f"Look at file {n}.",
                "thought": f"Look at file {n}.",
            }
            for n in range(5_000)
        ],
        "info": {"exit_status": "submitted", "submission": "diff --git a/x b/x\n"},
    }
    path = tmp_path / "big__big-1.traj"
    path.write_text(json.dumps(document))
    del document
    file_size = path.stat().st_size
    assert file_size > 50_000_000

    measured = subprocess.run(
        [sys.executable, "-c", _MEASURE_PARSE, str(PROJECT_ROOT), str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(measured.stdout)
    assert result["steps"] == 10_000
    # Linear work: the file's bytes, the parsed document and one canonical copy for the hash.
    # A copy of the document per step would need terabytes; quadratic work would take minutes.
    assert result["growth"] < 4 * file_size, result
    assert result["seconds"] < 20, result

    trajectory = parse_one(path)
    assert trajectory.steps[-1].observation == observation
    # Each observation step holds the parsed string itself: no per-step copies.
    observations = trajectory.steps[1::2]
    assert all(step.observation is step.content for step in observations)


@pytest.mark.parametrize("relative", REAL_FILES)
def test_content_hash_is_stable_across_parses(fixture_path, relative):
    first = [item.content_sha256 for item in iter_records(fixture_path(relative))]
    second = [item.content_sha256 for item in iter_records(fixture_path(relative))]
    assert first == second
    assert all(len(digest) == 64 and int(digest, 16) >= 0 for digest in first)


def test_content_hashes_differ_between_records_and_files(fixture_path):
    digests = [
        item.content_sha256
        for relative in REAL_FILES
        for item in iter_records(fixture_path(relative))
    ]
    assert len(digests) == len(set(digests)) == 4 + 30


def test_content_hash_ignores_layout_but_not_content(fixture_path, tmp_path, parse_one):
    original = fixture_path("real/swe-agent/test-repo-i1.traj")
    document = json.loads(original.read_text())

    reformatted = tmp_path / "reformatted.traj"
    reformatted.write_text(json.dumps(dict(reversed(document.items())), indent=None))
    assert parse_one(reformatted).content_sha256 == parse_one(original).content_sha256

    document["info"]["exit_status"] = "exit_cost"
    edited = tmp_path / "edited.traj"
    edited.write_text(json.dumps(document))
    assert parse_one(edited).content_sha256 != parse_one(original).content_sha256


def test_same_record_in_different_formats_hashes_differently(tmp_path, parse_one):
    record = {"instance_id": "a__a-1", "model_patch": "", "steps": []}
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record))
    assert (
        parse_one(path, "predictions").content_sha256 != parse_one(path, "specloom").content_sha256
    )
