import sys
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[3]
FIXTURES = PROJECT_ROOT / "tests" / "fixtures" / "formats"

# These tests run without the Django plugin (`-p no:django`), which is what would otherwise put
# the project root on sys.path; the module under test is plain Python and needs nothing else.
if str(PROJECT_ROOT) not in sys.path:
    sys.path.insert(0, str(PROJECT_ROOT))

from curation.ingest import ParsedTrajectory, RecordError, iter_records  # noqa: E402


@pytest.fixture
def fixture_path():
    def resolve(relative: str) -> Path:
        path = FIXTURES / relative
        assert path.is_file(), f"missing fixture {relative}"
        return path

    return resolve


def _parse_all(path, fmt="auto"):
    outcomes = list(iter_records(path, fmt))
    trajectories = [item for item in outcomes if isinstance(item, ParsedTrajectory)]
    errors = [item for item in outcomes if isinstance(item, RecordError)]
    assert len(trajectories) + len(errors) == len(outcomes)
    return trajectories, errors


def _parse_one(path, fmt="auto"):
    trajectories, errors = _parse_all(path, fmt)
    assert errors == []
    assert len(trajectories) == 1
    return trajectories[0]


@pytest.fixture
def parse_all():
    """Every outcome of a file, split into (trajectories, errors)."""
    return _parse_all


@pytest.fixture
def parse_one():
    """The single trajectory a file holds; fails the test on anything else."""
    return _parse_one


def roles_and_kinds(trajectory):
    return [(step.role, step.kind) for step in trajectory.steps]


@pytest.fixture
def shape():
    """A trajectory's steps as (role, kind) pairs."""
    return roles_and_kinds
