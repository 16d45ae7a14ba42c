"""Give a test run a var folder of its own, before anything reads the settings.

Its database, broker folders and cache stay apart from the demo's and from other test runs';
the processes it starts (Celery workers, manage.py) inherit the folder through the variable.
The settings only read SPECLOOM_VAR_DIR. This is a plugin loaded with `-p` (pyproject's
addopts), not a conftest hook: pytest-django imports the settings while pytest loads the
initial conftests, so a conftest's pytest_configure would come too late.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

BASE_DIR = Path(__file__).resolve().parent.parent


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    if not os.environ.get("SPECLOOM_VAR_DIR"):
        os.environ["SPECLOOM_VAR_DIR"] = str(BASE_DIR / "var" / "test" / f"run-{os.getpid()}")
