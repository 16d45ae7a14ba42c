"""There is no Docker engine here, so the compose file is checked by reading it: every command
must name a real module, management command, Celery app and queue, and every variable a real
setting."""

import importlib
import re
from pathlib import Path

import pytest
import yaml
from django.core.management import get_commands

from specloom.celery import app as celery_app

ROOT = Path(__file__).resolve().parents[2]
QUEUES = {"default", "sandbox", "synthesis"}


@pytest.fixture(scope="module")
def compose():
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def _app_services(compose):
    return {name: svc for name, svc in compose["services"].items() if "build" in svc}


def test_it_has_the_services_production_needs(compose):
    assert {"postgres", "redis", "web", "beat"} <= set(compose["services"])
    workers = [name for name in compose["services"] if name.startswith("worker")]
    assert workers, "at least one worker"
    for name in ("postgres", "redis", "web"):
        assert "healthcheck" in compose["services"][name], name


def test_every_command_names_something_real(compose):
    seen_queues = set()
    for name, service in _app_services(compose).items():
        command = service["command"]
        if command[:2] == ["python", "manage.py"]:
            assert command[2] in get_commands(), f"{name}: unknown management command"
        elif command[0] == "gunicorn":
            module, attribute = command[1].split(":")
            assert hasattr(importlib.import_module(module), attribute), name
        elif command[0] == "celery":
            assert command[1:3] == ["-A", "specloom"], name
            assert command[3] in {"worker", "beat"}, name
            if "-Q" in command:
                queues = set(command[command.index("-Q") + 1].split(","))
                assert queues <= QUEUES, f"{name}: unknown queue {queues - QUEUES}"
                seen_queues |= queues
        else:
            pytest.fail(f"{name}: unexpected command {command}")
    assert seen_queues == QUEUES, "every queue has a worker"
    importlib.import_module("workers.tasks")
    assert {"workers.run_job", "workers.reap_jobs"} <= set(celery_app.tasks)


def test_every_environment_variable_is_read_by_the_settings(compose):
    settings_source = (ROOT / "specloom" / "settings.py").read_text()
    for name, service in _app_services(compose).items():
        for variable in service["environment"]:
            assert re.search(rf'"{variable}"', settings_source), f"{name}: {variable} unused"


def test_the_dockerfile_runs_the_web_server_of_the_compose_file(compose):
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "specloom.wsgi:application" in dockerfile
    assert "FROM python:3.11" in dockerfile
