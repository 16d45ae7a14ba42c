"""Environment recipes on the fixture repositories (tests/fixtures/repos), one per cause a real
library met on its first try: inferred, tried in the real sandbox, stored with the report."""

from pathlib import Path

import pytest

from curation.models import EnvironmentRecipe
from curation.runtime import environment_for
from curation.services.recipes import (
    RecipeConflict,
    recipe_prepare,
    recipe_prepare_enqueue,
    recipe_row,
    recipe_update,
)
from curation.services.repositories import repository_import
from workers.models import Job
from workers.recipes.recipe import RecipeError
from workers.services import job_execute

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

REPOS = Path(__file__).resolve().parents[2] / "fixtures" / "repos"


def imported(name: str):
    return repository_import(source=str(REPOS / name), name=name.replace("_", "-"))


def test_coverage_and_xdist_addopts_are_dropped_with_a_note(repo_storage, sandbox_root):
    row = recipe_prepare(repository=imported("cov_addopts"))
    assert row.status == EnvironmentRecipe.Status.OK, row.reason
    assert row.recipe["pytest_addopts"] == "-ra"
    notes = " ".join(row.recipe["notes"])
    assert "--cov=covlib" in notes and "pytest-cov would collide" in notes
    assert "-n 2" in notes
    assert row.report["passed"] == 4 and row.report["collection_errors"] == []


def test_a_version_file_written_at_build_time_reaches_the_runs(repo_storage, sandbox_root):
    row = recipe_prepare(repository=imported("scm_version"))
    assert row.status == EnvironmentRecipe.Status.OK, (row.reason, row.attempts)
    assert row.recipe["environment"] == {"SETUPTOOLS_SCM_PRETEND_VERSION": "0.0.0"}
    # scmlib/_version.py is in no commit: the build wrote it, every run's copy gets it.
    assert row.report["passed"] == 4, row.report


def test_a_compiled_extension_module_reaches_the_runs(repo_storage, sandbox_root):
    row = recipe_prepare(repository=imported("c_extension"))
    assert row.status == EnvironmentRecipe.Status.OK, (row.reason, row.attempts)
    # cextlib/_speedups.*.so is in no commit and the project is uninstalled: the build's copy
    # is placed where an in-place build puts it, and every run's copy gets it. The optional
    # extension that does not compile leaves nothing to carry and is no error.
    assert row.report["passed"] == 3, row.report
    assert row.report["collection_errors"] == []


def test_test_dependencies_declared_in_tox_ini_are_installed(repo_storage, sandbox_root):
    row = recipe_prepare(repository=imported("tox_deps"))
    assert row.status == EnvironmentRecipe.Status.OK, (row.reason, row.attempts)
    assert any(package.startswith("freezegun") for package in row.recipe["packages"])
    assert "tox's test deps" in row.recipe["notes"]
    assert row.report["passed"] == 2
    assert len(row.attempts) == 1


def test_a_module_the_tests_import_is_added_after_the_first_try(repo_storage, sandbox_root):
    row = recipe_prepare(repository=imported("undeclared_import"))
    assert row.status == EnvironmentRecipe.Status.OK, (row.reason, row.attempts)
    assert "python-dateutil" in row.recipe["packages"]
    assert len(row.attempts) == 2
    first = row.attempts[0]["summary"]
    assert "failed to collect" in first and "dateutil" in first
    assert row.report["passed"] == 2


def test_files_that_fail_to_collect_are_named_and_the_rest_works(repo_storage, sandbox_root):
    repository = imported("tests_without_init")
    row = recipe_prepare(repository=repository)
    # The unittest tests import tests.helpers without tests/__init__.py: they run.
    assert row.status == EnvironmentRecipe.Status.OK, (row.reason, row.attempts)
    assert row.report["passed"] == 3
    broken = row.report["collection_errors"]
    assert [problem["path"] for problem in broken] == ["tests/test_broken.py"]
    assert "specloom_no_such_module_anywhere" in broken[0]["first_line"]
    assert "tests/test_broken.py" in row.reason
    assert "specloom-no-such-module-anywhere" not in str(row.recipe["packages"])


def test_a_repository_without_tests_fails_with_the_cause_and_a_fix(repo_storage, sandbox_root):
    repository = imported("no_tests")
    job = recipe_prepare_enqueue(repository=repository)
    assert job_execute(job_id=job.pk) == "failed"
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert "the snapshot has no test files" in job.message
    assert "Fix:" in job.message
    row = recipe_row(repository=repository)
    assert row.status == EnvironmentRecipe.Status.FAILED
    assert row.report["test_files"] == 0


def test_a_curators_recipe_is_tried_as_it_is_and_used_by_every_run(repo_storage, sandbox_root):
    repository = imported("cov_addopts")
    row = recipe_row(repository=repository)
    edited = recipe_update(
        row=row,
        data={"install": ".", "packages": [], "pytest_addopts": "", "pytest_options": ["-q"]},
        user=None,
        revision=row.revision,
    )
    assert edited.source == EnvironmentRecipe.Source.CURATOR
    spec = environment_for(repository)
    assert spec.pytest_addopts == "" and spec.pytest_options == ("-q",)
    row = recipe_prepare(repository=repository)
    assert row.status == EnvironmentRecipe.Status.OK
    assert len(row.attempts) == 1


def test_a_stale_or_invalid_edit_is_refused(repo_storage):
    repository = imported("cov_addopts")
    row = recipe_row(repository=repository)
    with pytest.raises(RecipeConflict):
        recipe_update(row=row, data={"install": "."}, user=None, revision=row.revision + 5)
    for bad in (
        {"install": "-e /etc"},
        {"packages": ["evil @ file:///etc/shadow"]},
        {"environment": {"PATH": "/tmp"}},
        {"surprise": 1},
        ["not", "an", "object"],
    ):
        with pytest.raises(RecipeError):
            recipe_update(row=row, data=bad, user=None, revision=row.revision)


def test_a_setup_command_set_on_the_repository_runs_jailed_as_the_jail_user(
    repo_storage, sandbox_root
):
    # What a curator once set in the admin to get root on the worker: now a jailed step.
    repository = imported("cov_addopts")
    repository.setup_command = "echo uid=$(id -u); head -c 15 /etc/shadow || echo no-shadow; exit 3"
    repository.save()
    row = recipe_prepare(repository=repository)
    assert row.status == EnvironmentRecipe.Status.FAILED
    (attempt,) = row.attempts
    assert "uid=65534" in attempt["error"] and "no-shadow" in attempt["error"]
    assert row.recipe["setup_commands"] == [repository.setup_command]
    assert "environment could not be built" in row.reason
