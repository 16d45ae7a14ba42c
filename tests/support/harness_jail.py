"""Run a SWE-bench record's eval script the way the official harness runs it in its container,
but in our process sandbox's jail (there is no Docker engine here).

The jail sees what the environment image holds (workers/sandbox/images.py): the repository at
the task's base commit as a git work tree at /testbed (read-write) and the environment's venv
at /opt/specloom-env (read-only). As the harness does, the model's patch is applied in /testbed
with `git apply --verbose` first (`>>>>> Applied Patch` or `>>>>> Patch Apply Failed`), then
`/bin/bash eval.sh` runs, standard error merged into standard output; that output is the log the
harness hands to its parser.
"""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

from workers.sandbox import EnvironmentSpec, Limits, Snapshot
from workers.sandbox.cgroups import owner_tag
from workers.sandbox.environments import GENERATED_FOLDER
from workers.sandbox.images import ENV_PREFIX, WORKDIR
from workers.sandbox.jail import Jail
from workers.sandbox.run_folder import add_generated_files
from workers.sandbox.workcopy import chown_tree, materialize_snapshot, remove_tree

# An empty patch is not applied (the harness's own `git apply` refuses empty input): it stands
# for an agent that changed nothing.
DRIVER = """\
cd {workdir}
if [ -s /harness/patch.diff ]; then
  if git apply --verbose /harness/patch.diff; then echo '>>>>> Applied Patch'; \
  else echo '>>>>> Patch Apply Failed'; exit 1; fi
fi
/bin/bash /harness/eval.sh
"""
_GIT = {
    "GIT_AUTHOR_NAME": "specloom",
    "GIT_AUTHOR_EMAIL": "specloom@example.invalid",
    "GIT_COMMITTER_NAME": "specloom",
    "GIT_COMMITTER_EMAIL": "specloom@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "PATH": "/usr/bin:/bin",
}


def run_like_the_harness(
    backend, snapshot: Snapshot, spec: EnvironmentSpec, *, model_patch: str, eval_script: str
) -> str:
    """The log of one harness run of `eval_script` on `model_patch`, jailed."""
    key, _built = backend.ensure_environment(snapshot, spec)
    environment = backend.environments.path(key)
    run = backend.runs / f"{owner_tag()}-{uuid.uuid4().hex}"
    work, support, scratch = run / "work", run / "harness", run / "scratch"
    try:
        for folder in (run, work, support, scratch):
            folder.mkdir(mode=0o755, parents=True)
        materialize_snapshot(snapshot, work, scratch=scratch)
        add_generated_files(work, environment / GENERATED_FOLDER)
        env = _GIT | {"HOME": str(scratch)}
        for argv in (["init", "-q"], ["add", "-A"], ["commit", "-q", "--allow-empty", "-m", "b"]):
            subprocess.run(["git", *argv], cwd=work, env=env, check=True, capture_output=True)
        (support / "patch.diff").write_text(model_patch, encoding="utf-8")
        (support / "eval.sh").write_text(eval_script, encoding="utf-8")
        (support / "driver.sh").write_text(DRIVER.format(workdir=WORKDIR), encoding="utf-8")
        for path in support.iterdir():
            path.chmod(0o644)
        if backend.jails.user is not None:
            chown_tree(work, *backend.jails.user)
        jail = Jail(
            argv=["/bin/bash", "/harness/driver.sh"],
            env={"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"},
            cwd="/",
            moved=(
                (str(work), WORKDIR, True),
                (str(environment), ENV_PREFIX, False),
                (str(support), "/harness", False),
            ),
        )
        finished = backend.jails.run(jail, Limits(wall_seconds=300), merge_stderr=True)
        return finished.stdout.text()
    finally:
        remove_tree(run)


def write_log(folder: Path, text: str) -> Path:
    path = folder / f"test_output-{uuid.uuid4().hex}.txt"
    path.write_text(text, encoding="utf-8")
    return path
