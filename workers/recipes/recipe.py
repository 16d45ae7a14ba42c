"""An environment recipe: what a repository's tests need, as data a curator can read and edit.

A recipe says how the project is installed (with which extras), which packages its tests need
besides, which environment variables the build and the tests get, which shell steps run after
the install (jailed, offline), and how our pytest runs differ from the repository's own
configuration (its `addopts` replaced, options added). The sandbox gets it as an
EnvironmentSpec; the environment's cache key is made of it.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field, fields

from workers.sandbox.types import EnvironmentSpec

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# The sandbox sets these itself; a recipe cannot move them.
RESERVED_VARIABLES = frozenset(
    {"PATH", "HOME", "TMPDIR", "PYTHONPATH", "VIRTUAL_ENV", "LANG", "PYTHONDONTWRITEBYTECODE"}
)
_INSTALL_TARGET = re.compile(r"^(\.|\.\[[A-Za-z0-9_.,\- ]*\])?$")
MAX_PACKAGES = 200
MAX_TEXT = 2000


class RecipeError(ValueError):
    """A recipe that cannot be used; the message says which field and why."""


@dataclass(frozen=True)
class Recipe:
    # How the project itself is installed: "." (plain), ".[test,dev]" (with extras), or "" (not
    # installed: only `packages`, for a folder of code that is not a distribution).
    install: str = "."
    packages: tuple[str, ...] = ()
    environment: tuple[tuple[str, str], ...] = ()
    setup_commands: tuple[str, ...] = ()
    # Replaces the repository's pytest addopts for our runs (None: keep them as they are).
    pytest_addopts: str | None = None
    pytest_options: tuple[str, ...] = ()
    python: str = "3.11"
    # One line per decision, for the curator: why a package, variable or option is there.
    notes: tuple[str, ...] = field(default=(), compare=False)

    def setup_command(self) -> str:
        steps = []
        if self.install:
            steps.append(f"pip install {shlex.quote(self.install)}")
        steps += list(self.setup_commands)
        if len(steps) <= 1:
            return steps[0] if steps else ""
        return "set -e\n" + "\n".join(steps)

    def environment_spec(self, *, python: str) -> EnvironmentSpec:
        return EnvironmentSpec(
            setup_command=self.setup_command(),
            extra_requirements=self.packages,
            python=python,
            environment=self.environment,
            pytest_addopts=self.pytest_addopts,
            pytest_options=self.pytest_options,
        )

    def with_changes(self, *, note: str, **changes) -> Recipe:
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(changes)
        values["notes"] = (*self.notes, note)
        return Recipe(**values)

    def adding_packages(self, packages: list[str], *, note: str) -> Recipe:
        """Add packages (the first mention of a name wins). The sandbox brings its own pytest
        and coverage (TOOL_REQUIREMENTS): a repository's pins of those would only conflict."""
        known = {_name_of(p) for p in self.packages} | set(SANDBOX_TOOLS)
        new = []
        for package in packages:
            if _name_of(package) not in known:
                known.add(_name_of(package))
                new.append(package)
        if not new:
            return self
        return self.with_changes(packages=(*self.packages, *new), note=note)

    def unpinned(self, *, note: str) -> Recipe:
        """The packages without version constraints (a lock file for another Python, pins
        that conflict with one another)."""
        return self.with_changes(
            packages=tuple(dict.fromkeys(_name_with_extras(p) for p in self.packages)), note=note
        )

    def to_dict(self) -> dict:
        return {
            "install": self.install,
            "packages": list(self.packages),
            "environment": dict(self.environment),
            "setup_commands": list(self.setup_commands),
            "pytest_addopts": self.pytest_addopts,
            "pytest_options": list(self.pytest_options),
            "python": self.python,
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: object) -> Recipe:
        """Validate an untrusted recipe (a curator's edit, a stored row) field by field."""
        if not isinstance(data, dict):
            raise RecipeError("a recipe is a JSON object")
        unknown = set(data) - {f.name for f in fields(cls)}
        if unknown:
            raise RecipeError(f"unknown recipe fields: {', '.join(sorted(unknown))}")
        install = _text(data.get("install", "."), "install").strip()
        if not _INSTALL_TARGET.match(install):
            raise RecipeError(
                "install must be '.', '.[extra,...]' or '' (the project is not installed)"
            )
        packages = tuple(_strings(data.get("packages", []), "packages"))
        if len(packages) > MAX_PACKAGES:
            raise RecipeError(f"packages: at most {MAX_PACKAGES}")
        for package in packages:
            _check_requirement(package)
        environment = data.get("environment", {})
        if not isinstance(environment, dict):
            raise RecipeError("environment is an object of variable names to values")
        for name, value in environment.items():
            if not _ENV_NAME.match(str(name)) or name in RESERVED_VARIABLES:
                raise RecipeError(f"environment: {name!r} cannot be set by a recipe")
            _text(value, f"environment {name}")
        addopts = data.get("pytest_addopts")
        if addopts is not None:
            _text(addopts, "pytest_addopts")
        return cls(
            install=install,
            packages=packages,
            environment=tuple(sorted((str(k), str(v)) for k, v in environment.items())),
            setup_commands=tuple(_strings(data.get("setup_commands", []), "setup_commands")),
            pytest_addopts=addopts,
            pytest_options=tuple(_strings(data.get("pytest_options", []), "pytest_options")),
            python=_text(data.get("python", "3.11"), "python"),
            notes=tuple(_strings(data.get("notes", []), "notes")),
        )


SANDBOX_TOOLS = ("pytest", "coverage")


def _name_with_extras(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*(\[[^\]]*\])?)", requirement)
    return match.group(1) if match else requirement


def _name_of(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return re.sub(r"[-_.]+", "-", match.group(1)).lower() if match else requirement


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise RecipeError(f"{what} must be text")
    if len(value) > MAX_TEXT or "\0" in value:
        raise RecipeError(f"{what} is too long or holds a NUL character")
    return value


def _strings(value: object, what: str) -> list[str]:
    if not isinstance(value, list):
        raise RecipeError(f"{what} must be a list of text")
    return [_text(item, what) for item in value]


def _check_requirement(text: str) -> None:
    from workers.sandbox.wheelhouse import FetchError, named_requirement

    try:
        named_requirement(text)
    except FetchError as exc:
        raise RecipeError(f"packages: {exc}") from exc
