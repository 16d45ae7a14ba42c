"""The docker backend: container options as a pure function, and a real run where an engine is."""

from __future__ import annotations

import io
import os
import tarfile

import pytest

from workers.sandbox import EnvironmentSpec, Limits, Outcome, RunRequest, get_backend
from workers.sandbox.docker_backend import container_options, run_archive
from workers.sandbox.images import CONTEXT_FILES, ImageSpec, python_version_of

NO_ENGINE = (
    "no Docker engine answers here (docker client only); this test needs one to build the "
    "environment image (images.py; its Dockerfile is checked with dockerfile-parse in "
    "test_sandbox_images.py) and run a container in it"
)


def options(**overrides):
    arguments = {
        "image": "specloom-env:abc",
        "command": ["/opt/specloom-env/bin/python", "-m", "pytest"],
        "environment": {"PATH": "/opt/specloom-env/bin:/usr/bin", "HOME": "/sandbox/home"},
        "limits": Limits(memory_bytes=512 * 1024**2, max_processes=64, cpu_seconds=30),
        "cpus": 1.5,
        "run_id": "run-1",
    }
    return container_options(**{**arguments, **overrides})


def test_the_container_has_no_network_and_runs_as_nobody():
    opts = options()
    assert opts["network_mode"] == "none"
    assert opts["user"] == "65534:65534"
    assert opts["cap_drop"] == ["ALL"]
    assert opts["security_opt"] == ["no-new-privileges"]


def test_the_container_root_is_read_only_and_only_the_run_and_tmpfs_are_written():
    opts = options()
    assert opts["read_only"] is True
    assert opts["volumes"] == {"specloom-run-run-1": {"bind": "/sandbox", "mode": "rw"}}
    assert set(opts["tmpfs"]) == {"/tmp", "/var/tmp", "/run", "/dev/shm"}
    assert all("nosuid" in options for options in opts["tmpfs"].values())


def test_the_container_gets_the_limits():
    opts = options()
    assert opts["mem_limit"] == 512 * 1024**2
    assert opts["memswap_limit"] == 512 * 1024**2
    assert opts["nano_cpus"] == 1_500_000_000
    assert opts["pids_limit"] == 64
    ulimits = {u["Name"]: (u["Soft"], u["Hard"]) for u in opts["ulimits"]}
    assert ulimits["cpu"] == (30, 35)
    assert ulimits["fsize"] == (Limits().max_file_bytes,) * 2
    assert ulimits["nofile"] == (Limits().max_open_files,) * 2
    assert ulimits["core"] == (0, 0)
    assert opts["init"] is True


def test_the_container_environment_holds_no_secret_of_the_worker(monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "do-not-leak")
    monkeypatch.setenv("DATABASE_URL", "postgres://u:p@127.0.0.1/db")
    opts = options()
    assert opts["environment"] == {
        "PATH": "/opt/specloom-env/bin:/usr/bin",
        "HOME": "/sandbox/home",
    }
    assert "do-not-leak" not in repr(opts)


def test_the_run_archive_gives_the_sandbox_to_nobody_and_keeps_support_read_only(tmp_path):
    for name in ("work", "support", "out", "home", "tmp"):
        (tmp_path / name).mkdir()
    (tmp_path / "work" / "mod.py").write_text("x = 1\n")
    (tmp_path / "support" / "plugin.py").write_text("")
    with tarfile.open(fileobj=io.BytesIO(run_archive(tmp_path))) as archive:
        members = {member.name: member for member in archive.getmembers()}
    assert (members["work/mod.py"].uid, members["work/mod.py"].gid) == (65534, 65534)
    assert members["support/plugin.py"].uid == 0
    assert members["support/plugin.py"].mode == 0o644


@pytest.fixture(scope="module")
def docker_engine():
    import docker

    try:
        docker.from_env().ping()
    except Exception:  # any failure to answer means there is no usable engine
        pytest.skip(NO_ENGINE)


@pytest.mark.slow
def test_a_real_run_in_a_container(docker_engine, make_snapshot, sandbox_root):
    snapshot = make_snapshot(
        {
            "tests/test_in_container.py": """\
                import os
                import socket

                import pytest

                import sampleproj


                def test_adds():
                    assert sampleproj.add(1, 2) == 3


                def test_has_no_network():
                    with pytest.raises(OSError):
                        socket.create_connection(("1.1.1.1", 80), timeout=3)


                def test_runs_as_nobody():
                    assert os.geteuid() == 65534
                """
        }
    )
    backend = get_backend("docker", root=sandbox_root / "docker")
    result = backend.run(RunRequest(snapshot=snapshot))
    assert result.isolation == "docker"
    assert {test.outcome for test in result.tests.values()} == {Outcome.PASSED}
    assert len(result.tests) == 3
    assert backend.ensure_environment(snapshot, EnvironmentSpec())[1] is False
    assert not os.listdir(sandbox_root / "docker" / "runs")


class FakeContainer:
    """Stands in for a Docker container: records calls, returns a prepared output folder."""

    def __init__(self, options, *, out_files, wait_error=None, oom_killed=False):
        self.options = options
        self.out_files = out_files
        self.wait_error = wait_error
        self.attrs = {"State": {"OOMKilled": oom_killed}}
        self.archives: list[tuple[str, bytes]] = []
        self.calls: list[str] = []

    def put_archive(self, path, data):
        self.archives.append((path, data))

    def attach(self, **kwargs):
        assert kwargs["demux"] and kwargs["stream"]
        return iter([(b"pytest says hello\n", None), (None, b"warning\n")])

    def start(self):
        self.calls.append("start")

    def wait(self, timeout):
        if self.wait_error is not None:
            raise self.wait_error
        return {"StatusCode": 1}

    def kill(self):
        self.calls.append("kill")

    def reload(self):
        pass

    def get_archive(self, path):
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as archive:
            for name, content in self.out_files.items():
                info = tarfile.TarInfo(f"out/{name}")
                info.size = len(content)
                archive.addfile(info, io.BytesIO(content))
        return iter([buffer.getvalue()]), {"name": "out"}

    def remove(self, force):
        self.calls.append("remove")


class FakeDockerClient:
    def __init__(self, **container_behaviour):
        self.images = self
        self.containers = self
        self.volumes = _FakeVolumes(self)
        self.removed_volumes: list[str] = []
        self.built: list[bytes] = []
        self.tags: list[str] = []
        self.created: list[FakeContainer] = []
        self.container_behaviour = container_behaviour

    def get(self, tag):  # images.get
        import docker

        if not self.built:
            raise docker.errors.ImageNotFound(tag)

    def build(self, fileobj, **kwargs):  # images.build
        assert kwargs["custom_context"]
        self.built.append(fileobj.read())
        self.tags.append(kwargs["tag"])

    def create(self, **options):  # containers.create
        container = FakeContainer(options, **self.container_behaviour)
        self.created.append(container)
        return container


class _FakeVolumes:
    def __init__(self, client):
        self.client = client

    def get(self, name):
        client = self.client

        class Volume:
            def remove(self, force):
                client.removed_volumes.append(name)

        return Volume()


EVENTS_OF_ONE_FAILURE = (
    b'{"kind": "started", "nodeid": "tests/test_x.py::test_x"}\n'
    b'{"kind": "finished", "nodeid": "tests/test_x.py::test_x", "outcome": "failed",'
    b' "duration": 0.1, "message": "AssertionError: boom"}\n'
)


@pytest.fixture
def docker_root(sandbox_root):
    return sandbox_root / "docker-fake"


def make_docker_backend(root, **behaviour):
    from workers.sandbox import prepare_root
    from workers.sandbox.docker_backend import DockerBackend

    client = FakeDockerClient(**behaviour)
    return DockerBackend(prepare_root(root), client=client), client


def test_the_docker_backend_builds_once_runs_a_container_and_reads_its_events(
    make_snapshot, docker_root
):
    snapshot = make_snapshot({"tests/test_x.py": "def test_x():\n    assert False\n"})
    backend, client = make_docker_backend(
        docker_root, out_files={"events.jsonl": EVENTS_OF_ONE_FAILURE}
    )
    result = backend.run(RunRequest(snapshot=snapshot))

    assert result.environment_built is True
    assert backend.ensure_environment(snapshot, EnvironmentSpec())[1] is False
    # Exactly the environment image a release ships: its Dockerfile, named by its hash.
    image = ImageSpec(
        environment=EnvironmentSpec(),
        python_version=python_version_of(EnvironmentSpec()),
        commit=snapshot.commit,
    )
    assert result.environment_key == image.hash
    assert client.tags == [f"specloom-env:{image.hash}"]
    with tarfile.open(fileobj=io.BytesIO(client.built[0])) as context:
        names = context.getnames()
        text = context.extractfile("Dockerfile").read().decode()
        with tarfile.open(fileobj=context.extractfile("source.tar.gz")) as source:
            assert "pyproject.toml" in source.getnames()
    assert sorted(names) == sorted(CONTEXT_FILES)
    assert text == image.dockerfile
    assert 'RUN ["sh", "-c", "pip install ."]' in text

    container = client.created[0]
    assert container.options["network_mode"] == "none"
    assert container.options["command"][:3] == ["/opt/specloom-env/bin/python", "-m", "pytest"]
    assert container.options["image"] == f"specloom-env:{image.hash}"
    ((path, data),) = container.archives
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        work_file = archive.getmember("work/src/sampleproj/__init__.py")
    # Into the run's volume: the container's root is read-only.
    assert (path, work_file.uid) == ("/sandbox", 65534)
    assert client.removed_volumes == [container.options["volumes"].popitem()[0]]
    assert container.calls == ["start", "remove"]

    assert result.tests["tests/test_x.py::test_x"].outcome == Outcome.FAILED
    assert result.exit_code == 1
    assert result.stdout_tail == "pytest says hello\n"
    assert result.stderr_tail == "warning\n"
    assert result.isolation == "docker"
    assert not os.listdir(docker_root / "runs")


def test_the_docker_backend_kills_a_container_at_the_wall_clock_limit(make_snapshot, docker_root):
    import requests

    snapshot = make_snapshot({"tests/test_x.py": "def test_x():\n    pass\n"})
    backend, client = make_docker_backend(
        docker_root,
        out_files={},
        wait_error=requests.exceptions.ReadTimeout(),
        oom_killed=True,
    )
    result = backend.run(RunRequest(snapshot=snapshot, limits=Limits(wall_seconds=1)))
    assert result.timed_out
    assert result.memory_exceeded  # the engine said OOMKilled
    assert client.created[0].calls == ["start", "kill", "remove"]
    assert result.tests == {}
