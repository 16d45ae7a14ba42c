"""The `docker` backend: one image per environment, one container per run.

For production hosts with a Docker engine. The image of an environment (a recipe and the
snapshot's commit) is built from exactly the Dockerfile and context that releases ship under
`environments/<hash>/` (images.py) and named `<prefix>:<hash>`. The working copy is prepared on
the host exactly as for the `process` backend (snapshot, removed paths, patches) and copied into
a container that has no network, memory/CPU/process limits, no capabilities, a read-only root
and runs as nobody; the results come back through `get_archive`.
"""

from __future__ import annotations

import contextlib
import io
import tarfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from .environments import EnvironmentStore
from .errors import EnvironmentBuildError, SandboxError
from .images import (
    DEFAULT_PREFIX,
    ENV_PREFIX,
    ImageSpec,
    build_context,
    context_tar,
    image_name,
    python_version_of,
)
from .results import record_outcomes
from .run_folder import SANDBOX_FOLDERS, RunFolder, prepare_working_copy
from .supervise import TailBuffer
from .types import EnvironmentSpec, Limits, RunRequest, RunResult, Snapshot
from .workcopy import git_environment, remove_tree, resolve_commit

CONTAINER_ROOT = "/sandbox"
NOBODY = (65534, 65534)
OUT_ARCHIVE_LIMIT = 1024**3


def container_options(
    *,
    image: str,
    command: list[str],
    environment: dict[str, str],
    limits: Limits,
    cpus: float,
    run_id: str,
) -> dict[str, Any]:
    """Keyword arguments for `client.containers.create` (pure, so that it can be unit-tested)."""
    from docker.types import LogConfig, Ulimit

    return {
        "image": image,
        "command": command,
        "environment": dict(environment),  # only what the sandbox builds, no worker secret
        "user": f"{NOBODY[0]}:{NOBODY[1]}",
        "working_dir": f"{CONTAINER_ROOT}/work",
        "network_mode": "none",
        "mem_limit": limits.memory_bytes,
        "memswap_limit": limits.memory_bytes,  # no swap on top of the memory limit
        "nano_cpus": int(cpus * 1e9),
        "pids_limit": limits.max_processes,
        "ulimits": [
            Ulimit(name="cpu", soft=limits.cpu_seconds, hard=limits.cpu_seconds + 5),
            Ulimit(name="fsize", soft=limits.max_file_bytes, hard=limits.max_file_bytes),
            Ulimit(name="nofile", soft=limits.max_open_files, hard=limits.max_open_files),
            Ulimit(name="core", soft=0, hard=0),
        ],
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "init": True,  # reaps orphans, so a fork bomb's zombies do not pin the pids limit
        # The same contract as the process backend's jail: a read-only root; the run's folder
        # (a volume of its own, filled before the start) and private tmpfs are all it writes.
        "read_only": True,
        "volumes": {run_volume(run_id): {"bind": CONTAINER_ROOT, "mode": "rw"}},
        "tmpfs": {
            folder: "rw,nosuid,nodev,size=512m"
            for folder in ("/tmp", "/var/tmp", "/run", "/dev/shm")  # noqa: S108 - the container's
        },
        # The daemon keeps logs too; cap them like the output we keep.
        "log_config": LogConfig(
            type=LogConfig.types.JSON,
            config={"max-size": str(max(limits.max_output_bytes, 1024 * 1024)), "max-file": "1"},
        ),
        "labels": {"org.specloom.sandbox-run": run_id},
        "stdin_open": False,
        "tty": False,
    }


def run_volume(run_id: str) -> str:
    return f"specloom-run-{run_id}"


def run_archive(run_dir: Path) -> bytes:
    """The run's folders for the container's /sandbox volume (the root is read-only): support
    read-only, the rest owned by nobody."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name in SANDBOX_FOLDERS:
            owned_by_nobody = name != "support"

            def as_sandbox(info: tarfile.TarInfo, owned: bool = owned_by_nobody) -> tarfile.TarInfo:
                info.uid, info.gid = NOBODY if owned else (0, 0)
                info.uname = info.gname = ""
                if not owned:
                    info.mode = 0o755 if info.isdir() else 0o644
                return info

            archive.add(run_dir / name, arcname=name, filter=as_sandbox)
    return buffer.getvalue()


class DockerBackend:
    name = "docker"

    def __init__(
        self,
        root: Path,
        *,
        cpus: float = 1.0,
        client: Any = None,
        image_prefix: str = DEFAULT_PREFIX,
    ) -> None:
        import docker

        self.root = root
        self.cpus = cpus
        self.image_prefix = image_prefix
        self.client = client or docker.from_env()
        # Keys, locks and scratch folders are shared with the process backend's layout.
        self.store = EnvironmentStore(root)
        self.runs = root / "runs"
        self.runs.mkdir(exist_ok=True)

    def image_spec(self, snapshot: Snapshot, spec: EnvironmentSpec) -> ImageSpec:
        commit = resolve_commit(snapshot, git_environment(self.store.builds))
        return ImageSpec(environment=spec, python_version=python_version_of(spec), commit=commit)

    def key(self, snapshot: Snapshot, spec: EnvironmentSpec) -> str:
        return self.image_spec(snapshot, spec).hash

    def image(self, key: str) -> str:
        return image_name(self.image_prefix, key)

    def close(self) -> None:
        """Nothing runs between runs: each run is a container of its own."""

    def ensure_environment(self, snapshot: Snapshot, spec: EnvironmentSpec) -> tuple[str, bool]:
        import docker

        image = self.image_spec(snapshot, spec)
        key = image.hash
        if self._image_exists(key):
            return key, False
        with self.store.build_lock(key):
            if self._image_exists(key):
                return key, False
            files = build_context(snapshot, image, scratch=self.store.builds)
            try:
                self.client.images.build(
                    fileobj=io.BytesIO(context_tar(files)),
                    custom_context=True,
                    tag=self.image(key),
                    rm=True,
                    forcerm=True,
                )
            except docker.errors.BuildError as exc:
                log = "".join(
                    str(part.get("stream", part.get("error", ""))) for part in exc.build_log
                )
                raise EnvironmentBuildError(
                    environment_key=key, command=str(exc.msg), returncode=None, output_tail=log
                ) from exc
        return key, True

    def _image_exists(self, key: str) -> bool:
        import docker

        try:
            self.client.images.get(self.image(key))
        except docker.errors.ImageNotFound:
            return False
        return True

    def run(self, request: RunRequest) -> RunResult:
        key, built = self.ensure_environment(request.snapshot, request.environment)
        result = RunResult(environment_key=key, environment_built=built, isolation="docker")
        run_id = uuid.uuid4().hex
        run = RunFolder(self.runs / run_id)
        try:
            run.create()
            self._run_in(run, run_id, request, result)
        finally:
            remove_tree(run.path)
        return result

    def _run_in(self, run: RunFolder, run_id: str, request: RunRequest, result: RunResult) -> None:
        import docker
        import requests

        # Ownership inside the container comes from the archive (run_archive), not the host.
        prepared = prepare_working_copy(run, request, sandbox_user=None)
        result.patch_failure = prepared.patch_failure
        if prepared.patch_failure is not None:
            return
        if prepared.nothing_to_run(request):
            result.missing_tests = list(request.tests or ())
            return
        paths = run.paths(python=f"{ENV_PREFIX}/bin/python", mount_point=CONTAINER_ROOT)
        command, environment = prepared.pytest_command(run, paths, request)
        options = container_options(
            image=self.image(result.environment_key),
            command=command,
            environment=environment,
            limits=request.limits,
            cpus=self.cpus,
            run_id=run_id,
        )
        stdout = TailBuffer(request.limits.max_output_bytes)
        stderr = TailBuffer(request.limits.max_output_bytes)
        started = time.monotonic()
        container = self.client.containers.create(**options)
        try:
            container.put_archive(CONTAINER_ROOT, run_archive(run.path))
            stream = container.attach(stdout=True, stderr=True, stream=True, logs=True, demux=True)
            reader = threading.Thread(target=_drain, args=(stream, stdout, stderr), daemon=True)
            container.start()
            reader.start()
            try:
                status = container.wait(timeout=request.limits.wall_seconds)
                result.exit_code = int(status.get("StatusCode", -1))
            except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
                result.timed_out = True
                container.kill()
            result.wall_seconds = time.monotonic() - started
            reader.join(10)
            container.reload()
            oom_killed = bool(container.attrs.get("State", {}).get("OOMKilled"))
            self._fetch_out(container, run.out)
        finally:
            with contextlib.suppress(docker.errors.APIError):
                container.remove(force=True)
            with contextlib.suppress(docker.errors.APIError):
                self.client.volumes.get(run_volume(run_id)).remove(force=True)
        record_outcomes(
            result,
            run.out,
            stdout=stdout,
            stderr=stderr,
            work_prefix=paths.work,
            coverage=request.coverage,
            oom_kills=int(oom_killed),
        )

    @staticmethod
    def _fetch_out(container: Any, out: Path) -> None:
        chunks, size = [], 0
        stream, _stat = container.get_archive(f"{CONTAINER_ROOT}/out")
        for chunk in stream:
            size += len(chunk)
            if size > OUT_ARCHIVE_LIMIT:
                raise SandboxError("the run's output folder is larger than the sandbox accepts")
            chunks.append(chunk)
        with tarfile.open(fileobj=io.BytesIO(b"".join(chunks))) as archive:
            for member in archive.getmembers():
                if not member.isfile():
                    continue
                name = Path(member.name).name  # flat folder: never a path out of `out`
                source = archive.extractfile(member)
                if source is not None:
                    (out / name).write_bytes(source.read())


def _drain(stream, stdout: TailBuffer, stderr: TailBuffer) -> None:
    for out_chunk, err_chunk in stream:
        if out_chunk:
            stdout.feed(out_chunk)
        if err_chunk:
            stderr.feed(err_chunk)
