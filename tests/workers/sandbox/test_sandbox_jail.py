"""The jail runner on its own: starts that fail for a moment are retried, other start failures
are raised at once with bubblewrap's reason, and a jailed program's exit is reported as is."""

from __future__ import annotations

import pytest

from workers.sandbox import Limits
from workers.sandbox.errors import SandboxStartError
from workers.sandbox.jail import Jail, JailRunner

pytestmark = pytest.mark.needs_root


@pytest.fixture(scope="module")
def runner(sandbox_root) -> JailRunner:
    return JailRunner(sandbox_root)


def true_jail(**overrides) -> Jail:
    return Jail(
        **{"argv": ["/bin/true"], "env": {"PATH": "/usr/bin:/bin"}, "cwd": "/", **overrides}
    )


def test_a_program_runs_and_its_exit_and_signals_are_reported(runner):
    assert runner.run(true_jail(), Limits(wall_seconds=30)).returncode == 0
    exits = runner.run(true_jail(argv=["/bin/sh", "-c", "exit 7"]), Limits(wall_seconds=30))
    assert exits.returncode == 7
    killed = runner.run(true_jail(argv=["/bin/sh", "-c", "kill -9 $$"]), Limits(wall_seconds=30))
    assert killed.returncode == 128 + 9


def test_a_start_without_room_for_its_processes_is_retried_then_reported(runner):
    # pids.max = 1: bubblewrap cannot fork its namespaces (EAGAIN), which is transient.
    with pytest.raises(SandboxStartError) as raised:
        runner.run(true_jail(), Limits(wall_seconds=30, max_processes=1))
    assert raised.value.transient
    assert "Resource temporarily unavailable" in str(raised.value)
    assert "after 4 attempts" in str(raised.value)


def test_a_start_that_succeeds_on_a_later_attempt_is_a_normal_run(sandbox_root):
    class CrowdedAtFirst(JailRunner):
        """The first start meets a full process table (a real EAGAIN), later ones do not."""

        attempts = 0

        def _run_once(self, jail, limits, **options):
            self.attempts += 1
            if self.attempts == 1:
                limits = Limits(wall_seconds=limits.wall_seconds, max_processes=1)
            return super()._run_once(jail, limits, **options)

    runner = CrowdedAtFirst(sandbox_root)
    finished = runner.run(true_jail(), Limits(wall_seconds=30))
    assert finished.returncode == 0
    assert finished.start_attempts == 2


def test_a_start_that_cannot_work_is_raised_at_once_with_the_reason(runner):
    with pytest.raises(SandboxStartError) as raised:
        runner.run(true_jail(cwd="/no/such/folder"), Limits(wall_seconds=30))
    assert not raised.value.transient
    assert "no/such/folder" in str(raised.value)
    assert "attempts" not in str(raised.value)
