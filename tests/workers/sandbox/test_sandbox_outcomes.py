"""Real runs of a sample repository: outcomes, exact ids, collection errors, selection, coverage."""

from __future__ import annotations

import pytest

from workers.sandbox import Outcome, RunRequest

pytestmark = pytest.mark.slow

OUTCOME_TESTS = {
    "tests/test_outcomes.py": """\
        import pytest

        import sampleproj


        def test_passes():
            assert sampleproj.add(1, 2) == 3


        def test_fails():
            assert sampleproj.add(1, 2) == 4, "arithmetic is broken"


        @pytest.fixture
        def broken_fixture():
            raise RuntimeError("the fixture broke")


        def test_errors(broken_fixture):
            pass


        @pytest.mark.skip(reason="not today")
        def test_skipped():
            pass


        @pytest.mark.xfail(reason="known bug")
        def test_expected_failure():
            assert False
        """,
    "tests/test_ids.py": """\
        import pytest


        @pytest.mark.parametrize(
            "value", ["with space", "[brackets]", "a::b", "ünïcode"], ids=None
        )
        def test_param(value):
            assert value


        @pytest.mark.parametrize("value", [1, 2], ids=["two words", "x[0] == 1"])
        def test_explicit_ids(value):
            assert value


        def test_ünïcode_name():
            pass


        class TestGrouped:
            def test_in_class(self):
                pass
        """,
    "tests/test_broken_import.py": """\
        import module_that_does_not_exist


        def test_never_collected():
            pass
        """,
    "tests/test_environment.py": """\
        import importlib.metadata
        import os

        import pytest
        import six

        import sampleproj


        def test_project_comes_from_the_working_copy():
            assert sampleproj.__file__.startswith(os.getcwd() + "/src/")


        def test_project_is_not_installed_in_the_environment():
            with pytest.raises(importlib.metadata.PackageNotFoundError):
                importlib.metadata.distribution("sampleproj")


        def test_dependencies_are():
            assert six.PY3
        """,
}

IDS = "tests/test_ids.py::"
NASTY_IDS = [
    IDS + "test_param[with space]",
    IDS + "test_param[[brackets]]",
    IDS + "test_param[a::b]",
    IDS + "test_explicit_ids[x[0] == 1]",
    IDS + "test_ünïcode_name",
]


@pytest.fixture(scope="module")
def outcome_snapshot(make_snapshot):
    return make_snapshot(OUTCOME_TESTS)


@pytest.fixture(scope="module")
def full_run(session_backend, outcome_snapshot):
    return session_backend.run(RunRequest(snapshot=outcome_snapshot))


def test_it_classifies_pass_fail_error_skip(full_run):
    outcomes = {nodeid: test.outcome for nodeid, test in full_run.tests.items()}
    base = "tests/test_outcomes.py::"
    assert outcomes[base + "test_passes"] == Outcome.PASSED
    assert outcomes[base + "test_fails"] == Outcome.FAILED
    assert outcomes[base + "test_errors"] == Outcome.ERROR
    assert outcomes[base + "test_skipped"] == Outcome.SKIPPED
    assert outcomes[base + "test_expected_failure"] == Outcome.SKIPPED
    assert "arithmetic is broken" in full_run.tests[base + "test_fails"].message
    assert "the fixture broke" in full_run.tests[base + "test_errors"].message
    assert full_run.tests[base + "test_skipped"].message == "Skipped: not today"
    assert full_run.tests[base + "test_expected_failure"].message == "xfail: known bug"
    assert full_run.tests[base + "test_passes"].message == ""
    assert full_run.exit_code == 1
    assert full_run.isolation
    assert full_run.wall_seconds > 0


def test_it_reports_a_module_that_fails_to_import_as_a_collection_error(full_run):
    assert [error.path for error in full_run.collection_errors] == ["tests/test_broken_import.py"]
    assert "module_that_does_not_exist" in full_run.collection_errors[0].message
    # The module's tests were never collected: they are not failures.
    assert not [nodeid for nodeid in full_run.tests if "test_broken_import" in nodeid]


def test_it_runs_the_working_copy_against_the_environments_dependencies(full_run):
    for name in (
        "test_project_comes_from_the_working_copy",
        "test_project_is_not_installed_in_the_environment",
        "test_dependencies_are",
    ):
        test = full_run.tests[f"tests/test_environment.py::{name}"]
        assert test.outcome == Outcome.PASSED, test.message


def test_it_keeps_ids_with_spaces_brackets_and_unicode_exactly(full_run):
    for nodeid in NASTY_IDS:
        assert full_run.tests[nodeid].outcome == Outcome.PASSED
    # pytest escapes non-ASCII parameter values; the escaped id is what must survive.
    assert full_run.tests[IDS + "test_param[\\xfcn\\xefcode]"].outcome == Outcome.PASSED


def test_it_runs_exactly_the_ids_it_reported(session_backend, outcome_snapshot, full_run):
    every_id = tuple(full_run.tests)
    again = session_backend.run(RunRequest(snapshot=outcome_snapshot, tests=every_id))
    assert set(again.tests) == set(every_id)
    for nodeid in NASTY_IDS[:2] + NASTY_IDS[-1:]:
        single = session_backend.run(RunRequest(snapshot=outcome_snapshot, tests=(nodeid,)))
        assert list(single.tests) == [nodeid]
        assert single.collection_errors == []


def test_it_selects_a_class_or_module_and_reports_missing_ids(backend, outcome_snapshot):
    result = backend.run(
        RunRequest(
            snapshot=outcome_snapshot,
            tests=(
                IDS + "TestGrouped",
                "tests/test_outcomes.py::test_passes",
                IDS + "test_no_such_test",
                "tests/no_such_file.py::test_x",
            ),
        )
    )
    assert set(result.tests) == {
        IDS + "TestGrouped::test_in_class",
        "tests/test_outcomes.py::test_passes",
    }
    assert sorted(result.missing_tests) == sorted(
        [IDS + "test_no_such_test", "tests/no_such_file.py::test_x"]
    )


def test_it_reports_every_id_missing_when_no_file_exists(backend, outcome_snapshot):
    result = backend.run(RunRequest(snapshot=outcome_snapshot, tests=("tests/gone.py::test_a",)))
    assert result.tests == {}
    assert result.missing_tests == ["tests/gone.py::test_a"]


def test_it_keeps_raw_unicode_ids_when_the_repository_disables_escaping(backend, make_snapshot):
    snapshot = make_snapshot(
        {
            "pytest.ini": """\
                [pytest]
                disable_test_id_escaping_and_forfeit_all_rights_to_community_support = true
                """,
            "tests/test_raw.py": """\
                import pytest


                @pytest.mark.parametrize("value", ["ünï 🙂", "a/b", 'quote"d'])
                def test_raw(value):
                    assert value
                """,
        }
    )
    expected = {
        "tests/test_raw.py::test_raw[ünï 🙂]",
        "tests/test_raw.py::test_raw[a/b]",
        'tests/test_raw.py::test_raw[quote"d]',
    }
    result = backend.run(RunRequest(snapshot=snapshot))
    assert set(result.tests) == expected
    single = backend.run(
        RunRequest(snapshot=snapshot, tests=("tests/test_raw.py::test_raw[ünï 🙂]",))
    )
    assert list(single.tests) == ["tests/test_raw.py::test_raw[ünï 🙂]"]


def test_it_checks_out_files_that_git_archive_would_leave_out(backend, make_snapshot):
    snapshot = make_snapshot(
        {
            ".gitattributes": "tests/ export-ignore\n",
            "tests/test_present.py": "def test_present():\n    pass\n",
        }
    )
    result = backend.run(RunRequest(snapshot=snapshot))
    assert list(result.tests) == ["tests/test_present.py::test_present"]


def test_it_measures_coverage_per_test(backend, make_snapshot):
    snapshot = make_snapshot(
        {
            "tests/test_cov.py": """\
                import pytest

                import sampleproj


                def test_add():
                    assert sampleproj.add(2, 3) == 5


                @pytest.mark.parametrize("factor", [2, 3])
                def test_mul(factor):
                    assert sampleproj.mul(factor, 1) == factor
                """
        }
    )
    result = backend.run(RunRequest(snapshot=snapshot, coverage=True))
    assert all(test.outcome == Outcome.PASSED for test in result.tests.values())
    assert result.coverage is not None
    package = "src/sampleproj/__init__.py"
    # add's body is line 2, mul's is line 6 (see SAMPLE_PACKAGE).
    assert 2 in result.coverage["tests/test_cov.py::test_add"][package]
    assert 6 not in result.coverage["tests/test_cov.py::test_add"][package]
    for nodeid in ("tests/test_cov.py::test_mul[2]", "tests/test_cov.py::test_mul[3]"):
        assert 6 in result.coverage[nodeid][package]
        assert 2 not in result.coverage[nodeid][package]
    # The test files themselves are in the working copy too: the caller filters.
    assert "tests/test_cov.py" in result.coverage["tests/test_cov.py::test_add"]


def test_tests_outside_the_selection_are_not_even_collected(backend, make_snapshot):
    # Collecting test_unwanted raises (its ids cannot be made); pytest given node ids on its
    # command line never collects it, and neither does a selection that leaves it out.
    snapshot = make_snapshot(
        {
            "tests/test_mixed.py": """\
                import pytest


                def broken_ids(value):
                    raise RuntimeError("ids of an unwanted test")


                @pytest.mark.parametrize("value", [1], ids=broken_ids)
                def test_unwanted(value):
                    pass


                def test_wanted():
                    pass


                class TestUnwanted:
                    def test_method(self):
                        pass
                """,
        }
    )
    selected = backend.run(
        RunRequest(snapshot=snapshot, tests=("tests/test_mixed.py::test_wanted",))
    )
    assert list(selected.tests) == ["tests/test_mixed.py::test_wanted"]
    assert selected.collection_errors == []
    everything = backend.run(RunRequest(snapshot=snapshot))
    assert [error.path for error in everything.collection_errors] == ["tests/test_mixed.py"]
