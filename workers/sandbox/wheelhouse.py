"""The wheelhouse: distributions fetched as plain files by the trusted side, so that everything
that executes during an environment build can run in the jail, offline.

Nothing fetched is executed here. Wheels are resolved and fetched with
`pip download --only-binary=:all:` (pip reads a wheel's metadata from the file; no build
backend runs). A requirement that has no wheel gets its source distribution as a plain file,
found on the same indexes with unearth and downloaded without being unpacked or built; its own
dependencies are found when the jailed build asks for them. Requirements come from untrusted
files, so only named requirements are accepted: never a URL, a path or a pip option.

The folder is shared by every environment of a sandbox root: files are written to a private
folder first and renamed into place, so a jailed build never reads half a file.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from .workcopy import remove_tree

_DOWNLOAD_TIMEOUT_SECONDS = 900
_MISSING = re.compile(
    r"(?:No matching distribution found for|Could not find a version that satisfies the "
    r"requirement) ([^\s(]+)",
)
_DISTRIBUTION_FILE = re.compile(r"\.(whl|tar\.gz|zip|tar\.bz2)$")


class FetchError(Exception):
    """A requirement could not be had as a file; the message says which and why."""


@dataclass
class FetchReport:
    fetched: list[str] = field(default_factory=list)  # file names new in the wheelhouse
    failed: dict[str, str] = field(default_factory=dict)  # requirement -> why
    log: list[str] = field(default_factory=list)


def missing_requirements(output: str) -> list[str]:
    """The requirements a jailed, offline pip said it could not find, in order, deduplicated."""
    found = []
    for match in _MISSING.finditer(output):
        requirement = match.group(1).strip().strip("'\"").rstrip(".,;")
        if requirement and requirement not in found:
            found.append(requirement)
    return found


def named_requirement(text: str) -> Requirement:
    """Parse an untrusted requirement; only `name[extras] specifiers ; marker` is accepted."""
    stripped = text.strip()
    if not stripped or stripped.startswith("-"):
        raise FetchError(f"{text!r} is not a requirement")
    try:
        requirement = Requirement(stripped)
    except InvalidRequirement as exc:
        raise FetchError(f"{text!r} is not a valid requirement: {exc}") from exc
    if requirement.url:
        raise FetchError(
            f"{requirement.name}: requirements by URL or path are not fetched ({requirement.url})"
        )
    return requirement


@functools.cache
def index_settings() -> dict[str, list[str]]:
    """The operator's index settings as pip itself resolves them (config files + PIP_* env)."""
    settings: dict[str, list[str]] = {"index-url": [], "extra-index-url": [], "find-links": []}
    try:
        listing = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        listing = ""
    for line in listing.splitlines():
        key, _, value = line.partition("=")
        name = key.rsplit(".", 1)[-1]
        if name in settings:
            settings[name] = shlex.split(value.strip().strip("'\""))
    return settings


class Wheelhouse:
    def __init__(self, folder: Path, *, python_version: str) -> None:
        self.folder = folder
        self.python_version = python_version  # "3.11.2": what the wheels must fit
        self.staging = folder.parent / "wheelhouse-staging"
        for path in (self.folder, self.staging):
            path.mkdir(parents=True, exist_ok=True)
        # Jailed builds read it (bound read-only); its files are public packages.
        self.folder.chmod(0o755)
        self.staging.chmod(0o700)

    def files(self) -> set[str]:
        return {name for name in os.listdir(self.folder) if _DISTRIBUTION_FILE.search(name)}

    def fetch(self, requirements: list[str], *, environ: dict[str, str]) -> FetchReport:
        """Fetch wheels (with their dependencies) for `requirements`, sdists where no wheel fits.

        `environ` carries the operator's pip settings (index, certificates, proxies).
        """
        report = FetchReport()
        wanted: list[str] = []
        for text in requirements:
            try:
                wanted.append(str(named_requirement(text)))
            except FetchError as exc:
                report.failed[text] = str(exc)
        if not wanted:
            return report
        before = self.files()
        # One resolution for all is fastest; when one requirement spoils it, go one by one.
        if not self._pip_download(wanted, environ=environ, report=report):
            for requirement in wanted:
                if self._pip_download([requirement], environ=environ, report=report):
                    continue
                try:
                    self._fetch_sdist(requirement, report=report)
                except FetchError as exc:
                    report.failed[requirement] = str(exc)
        report.fetched = sorted(self.files() - before)
        return report

    def _pip_download(self, requirements: list[str], *, environ: dict[str, str], report) -> bool:
        private = self.staging / uuid.uuid4().hex
        private.mkdir()
        # Resolved for the jail's interpreter, not the one running pip: its tags and its full
        # version (a package may require ">=3.11.5" where the jail has 3.11.2).
        target = ["--python-version", self.python_version, "--implementation", "cp"]
        argv = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--only-binary=:all:",
            *target,
            "--dest",
            str(private),
            "--find-links",
            str(self.folder),
            "--progress-bar",
            "off",
            "--",
            *requirements,
        ]
        try:
            proc = subprocess.run(
                argv,
                env=environ,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=_DOWNLOAD_TIMEOUT_SECONDS,
                check=False,
            )
            ok = proc.returncode == 0
            report.log.append(
                f"pip download {' '.join(requirements)}: "
                + ("ok" if ok else _last_error(proc.stdout + proc.stderr))
            )
            if ok:
                self._publish(private)
            return ok
        except subprocess.TimeoutExpired:
            report.log.append(f"pip download {' '.join(requirements)}: timed out")
            return False
        finally:
            remove_tree(private)

    def _fetch_sdist(self, requirement: str, *, report: FetchReport) -> None:
        from unearth import PackageFinder, TargetPython

        settings = index_settings()
        indexes = settings["index-url"][:1] or ["https://pypi.org/simple"]
        finder = PackageFinder(
            index_urls=[*indexes, *settings["extra-index-url"]],
            find_links=settings["find-links"],
            target_python=TargetPython(
                py_ver=tuple(int(p) for p in self.python_version.split("."))
            ),
        )
        parsed = named_requirement(requirement)
        best = None
        for package in finder.find_matches(parsed):
            if not package.link.is_wheel:
                best = package
                break
        if best is None:
            raise FetchError(
                f"{parsed.name}: no wheel for Python {self.python_version} and no source "
                "distribution on the configured indexes"
            )
        private = self.staging / uuid.uuid4().hex
        private.mkdir()
        try:
            finder.download(best.link, private)
            self._publish(private)
        except Exception as exc:  # unearth raises its own and network errors alike
            raise FetchError(
                f"{parsed.name}: downloading {best.link.filename} failed: {exc}"
            ) from exc
        finally:
            remove_tree(private)
        report.log.append(f"source distribution {best.link.filename} for {requirement}")

    def _publish(self, private: Path) -> None:
        for path in private.iterdir():
            if path.is_file() and not path.is_symlink() and _DISTRIBUTION_FILE.search(path.name):
                path.chmod(0o644)
                os.replace(path, self.folder / path.name)


def _last_error(output: str) -> str:
    lines = [line for line in output.splitlines() if line.startswith("ERROR")]
    return (lines[-1] if lines else output.strip()[-300:]) or "failed"
