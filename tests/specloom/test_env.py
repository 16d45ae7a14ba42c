import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from specloom.env import database_from_url, env_bool, env_int, private_folder

ROOT = Path(__file__).resolve().parents[2]


def test_it_reads_integers_and_booleans():
    assert env_int("N", 5, environ={"N": " 12 "}) == 12
    assert env_int("N", 5, environ={}) == 5
    assert env_bool("B", False, environ={"B": "yes"}) is True
    assert env_bool("B", True, environ={"B": "0"}) is False


@pytest.mark.parametrize("raw", ["ten", "1.5", "12abc"], ids=["word", "float", "suffix"])
def test_it_rejects_a_non_integer_limit_with_the_variable_name(raw):
    with pytest.raises(ImproperlyConfigured, match=f"LIMIT must be an integer, got '{raw}'"):
        env_int("LIMIT", 1, environ={"LIMIT": raw})


def test_it_rejects_a_limit_below_its_minimum():
    with pytest.raises(ImproperlyConfigured, match="must be at least 1"):
        env_int("LIMIT", 1, minimum=1, environ={"LIMIT": "0"})


def test_it_rejects_a_malformed_boolean():
    with pytest.raises(ImproperlyConfigured, match="DEBUG must be a boolean"):
        env_bool("DEBUG", False, environ={"DEBUG": "maybe"})


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("localhost:5432/db", "is not a URL"),
        ("mysql://u@h/db", "unsupported database|could not be parsed"),
        ("postgres://u@h:5432/", "names no database"),
        ("nosuch://x/y", "could not be parsed|unsupported"),
    ],
    ids=["no scheme", "mysql", "no name", "unknown scheme"],
)
def test_it_rejects_a_malformed_database_url(url, message):
    with pytest.raises(ImproperlyConfigured, match=message):
        database_from_url(url)


def test_it_parses_postgres_and_sqlite_urls():
    pg = database_from_url("postgres://postgres@127.0.0.1:5432/specloom")
    assert pg["ENGINE"] == "django.db.backends.postgresql"
    assert pg["NAME"] == "specloom"
    lite = database_from_url("sqlite:////tmp/x.sqlite3")
    assert lite["OPTIONS"]["transaction_mode"] == "IMMEDIATE"


def _run_manage(*args, **env):
    # A clean environment: only what a deployment would set, nothing other tests left behind.
    environment = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/tmp"),
        "LANG": "C.UTF-8",
        "SPECLOOM_VAR_DIR": str(settings.VAR_DIR),
    }
    environment.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_process_refuses_to_start_with_a_malformed_database_url():
    result = _run_manage("check", DATABASE_URL="postgres//oops")
    assert result.returncode != 0
    assert "DATABASE_URL is not a URL" in result.stderr


def test_the_process_refuses_to_start_with_a_non_integer_limit():
    result = _run_manage("check", SPECLOOM_JOB_LEASE_SECONDS="soon")
    assert result.returncode != 0
    assert "SPECLOOM_JOB_LEASE_SECONDS must be an integer, got 'soon'" in result.stderr


def test_production_settings_pass_the_deploy_check():
    result = _run_manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        SPECLOOM_ENV="production",
        SECRET_KEY="x" * 20 + "-a-long-random-production-secret-value-0123456789",
        ALLOWED_HOSTS="specloom.example.com",
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_production_refuses_to_start_without_a_secret_key():
    result = _run_manage("check", SPECLOOM_ENV="production", SECRET_KEY="")
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_private_folders_are_made_and_kept_for_the_application_alone(tmp_path):
    made = private_folder(tmp_path / "a" / "b")
    assert stat.S_IMODE(made.stat().st_mode) == 0o700
    careless = tmp_path / "careless"
    careless.mkdir(mode=0o755)
    careless.chmod(0o755)
    assert stat.S_IMODE(private_folder(careless).stat().st_mode) == 0o700


def test_the_database_storage_broker_and_cache_are_not_readable_by_others(settings):
    # The SQLite database lives in VAR_DIR; a sandboxed test once copied it from a 755 folder.
    for folder in (settings.VAR_DIR, settings.STORAGE_ROOT, settings.BROKER_DIR):
        assert stat.S_IMODE(Path(folder).stat().st_mode) == 0o700, folder
