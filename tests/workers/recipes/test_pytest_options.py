"""The repository's addopts: what keeps a run's meaning is kept, the rest dropped with a why."""

import pytest

from workers.recipes.pytest_options import filter_addopts


@pytest.mark.parametrize(
    ("addopts", "kept", "dropped"),
    [
        ("--cov=pkg --cov-report=term -ra", "-ra", ["--cov=pkg", "--cov-report=term"]),
        ("-n auto --dist loadfile -q", "-q", ["-n auto", "--dist loadfile"]),
        ("-x --lf --strict-markers", "--strict-markers", ["-x", "--lf"]),
        (
            "--doctest-modules -p no:warnings -p xdist",
            "--doctest-modules -p no:warnings",
            ["-p xdist"],
        ),
        ("tests --junitxml=out.xml", "", ["tests", "--junitxml=out.xml"]),
        ("--timeout 10 -W error", "-W error", ["--timeout 10"]),
    ],
)
def test_it_keeps_only_what_keeps_results_meaningful(addopts, kept, dropped):
    filtered = filter_addopts(addopts)
    assert filtered.addopts == kept
    assert filtered.dropped == dropped
    assert len(filtered.notes) == len(dropped)


def test_coverage_options_are_dropped_because_ours_would_collide():
    (note,) = filter_addopts("--cov=pkg").notes
    assert "pytest-cov would collide" in note


def test_a_timeout_is_kept_when_the_recipe_installs_its_plugin():
    assert filter_addopts(
        "--timeout 10", installed_plugins=frozenset({"pytest-timeout"})
    ).addopts == ("--timeout 10")


def test_unparsable_addopts_are_dropped_whole():
    filtered = filter_addopts('-k "unterminated')
    assert filtered.addopts == "" and filtered.dropped
