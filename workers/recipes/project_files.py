"""What a repository's own files say about its tests' needs, read as data (nothing is run).

Test dependencies hide in many places: test extras (pyproject's optional-dependencies,
setup.cfg's extras_require), PEP 735 dependency groups, requirements files for tests or
development, tox's deps, and pytest plugins named by the pytest configuration. This module
reads them all from the files' texts.
"""

from __future__ import annotations

import configparser
import contextlib
import re
import shlex
import tomllib
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import PurePosixPath

TEST_EXTRA = re.compile(r"^(tests?|testing|dev|develop|development|check|ci|unit)$", re.I)
# Extras made for running the tests, preferred to broader development extras (linters,
# release tools) when a project has both.
NARROW_TEST_EXTRA = re.compile(r"^(tests?|testing|unit)$", re.I)
REQUIREMENTS_FOR_TESTS = (
    "requirements*test*.txt",
    "requirements*dev*.txt",
    "test*requirements*.txt",
    "dev*requirements*.txt",
    "requirements/test*.txt",
    "requirements/dev*.txt",
    "requirements/tests*.in",
    "requirements/test*.in",
    "tests/requirements*.txt",
    "test/requirements*.txt",
    "requirements-ci.txt",
)
# Build backends that take the version from version control, which an archive lacks.
SCM_VERSION_BUILDERS = ("setuptools_scm", "setuptools-scm", "hatch-vcs", "hatch_vcs")
PDM_SCM = "pdm-backend"
# pytest configuration keys and options that only a plugin understands.
PLUGIN_BY_INI_KEY = {
    "timeout": "pytest-timeout",
    "timeout_method": "pytest-timeout",
    "asyncio_mode": "pytest-asyncio",
    "asyncio_default_fixture_loop_scope": "pytest-asyncio",
    "mock_use_standalone_module": "pytest-mock",
    "env": "pytest-env",
    "DJANGO_SETTINGS_MODULE": "pytest-django",
    "django_find_project": "pytest-django",
    "flake8-ignore": "pytest-flake8",
    "mypy-ini-file": "pytest-mypy",
    "randomly_seed": "pytest-randomly",
    "trio_mode": "pytest-trio",
    "anyio_mode": "anyio",
}
CONFIG_FILES = ("pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini", ".pytest.ini", "setup.py")


def wanted_files(paths: list[str]) -> list[str]:
    """Which of the snapshot's files this module reads (the service fetches their texts)."""
    patterns = (*REQUIREMENTS_FOR_TESTS, "requirements*.txt", "requirements/*.txt")
    return [
        path
        for path in paths
        if path in CONFIG_FILES
        or path == "PKG-INFO"
        or any(fnmatch(path, pattern) for pattern in patterns)
    ]


@dataclass
class ProjectConfig:
    installable: bool = False
    name: str = ""
    version: str = ""  # PKG-INFO's (an sdist) or the static [project] version
    build_requires: list[str] = field(default_factory=list)
    test_extras: list[str] = field(default_factory=list)
    group_packages: dict[str, list[str]] = field(default_factory=dict)
    requirement_files: dict[str, list[str]] = field(default_factory=dict)
    tox_deps: list[str] = field(default_factory=list)
    pytest_ini: dict[str, str] = field(default_factory=dict)
    pytest_ini_file: str = ""
    scm_version: bool = False
    pdm_scm_version: bool = False


def _narrowest(extras: list[str]) -> list[str]:
    narrow = [name for name in extras if NARROW_TEST_EXTRA.match(name)]
    return narrow or extras


def read_project(files: dict[str, str]) -> ProjectConfig:
    config = ProjectConfig()
    config.installable = any(name in files for name in ("pyproject.toml", "setup.py", "setup.cfg"))
    pyproject = _toml(files.get("pyproject.toml", ""))
    setup_cfg = _ini(files.get("setup.cfg", ""))
    tox = _ini(files.get("tox.ini", ""))
    _read_pyproject(config, pyproject)
    _read_setup_cfg(config, setup_cfg)
    _read_pkg_info(config, files.get("PKG-INFO", ""))
    setup_py = files.get("setup.py", "")
    if any(builder in setup_py for builder in ("use_scm_version", "setuptools_scm")):
        config.scm_version = True
    for path, text in sorted(files.items()):
        if path.endswith((".txt", ".in")):
            config.requirement_files[path] = parse_requirements(text, files, path)
    config.test_extras = _narrowest(list(dict.fromkeys(config.test_extras)))
    config.tox_deps = _tox_deps(tox, files)
    config.pytest_ini, config.pytest_ini_file = _pytest_ini(files, pyproject, setup_cfg, tox)
    return config


def _toml(text: str) -> dict:
    if not text:
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def _ini(text: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    with contextlib.suppress(configparser.Error):
        parser.read_string(text)
    return parser


def _read_pyproject(config: ProjectConfig, data: dict) -> None:
    build = data.get("build-system") if isinstance(data.get("build-system"), dict) else {}
    requires = [r for r in build.get("requires", []) if isinstance(r, str)]
    config.build_requires = requires
    backend = str(build.get("build-backend", ""))
    lowered = " ".join(requires).lower()
    if any(builder in lowered for builder in SCM_VERSION_BUILDERS):
        config.scm_version = True
    tool = data.get("tool") if isinstance(data.get("tool"), dict) else {}
    if "setuptools_scm" in tool or (
        isinstance(tool.get("hatch"), dict) and "vcs" in str(tool["hatch"].get("version", ""))
    ):
        config.scm_version = True
    pdm = tool.get("pdm") if isinstance(tool.get("pdm"), dict) else {}
    if PDM_SCM in backend and "scm" in str(pdm.get("version", "")):
        config.pdm_scm_version = True
    project = data.get("project") if isinstance(data.get("project"), dict) else {}
    config.name = config.name or str(project.get("name", ""))
    if isinstance(project.get("version"), str):
        config.version = project["version"]
    extras = project.get("optional-dependencies")
    if isinstance(extras, dict):
        config.test_extras += [name for name in extras if TEST_EXTRA.match(str(name))]
    groups = data.get("dependency-groups")
    if isinstance(groups, dict):
        for name in groups:
            if TEST_EXTRA.match(str(name)):
                config.group_packages[name] = _dependency_group(groups, name, set())


def _dependency_group(groups: dict, name: str, seen: set[str]) -> list[str]:
    """PEP 735: a group's requirements, include-group entries expanded (cycles ignored)."""
    if name in seen or not isinstance(groups.get(name), list):
        return []
    seen.add(name)
    found: list[str] = []
    for entry in groups[name]:
        if isinstance(entry, str):
            found.append(entry)
        elif isinstance(entry, dict) and isinstance(entry.get("include-group"), str):
            found += _dependency_group(groups, entry["include-group"], seen)
    return found


def _read_setup_cfg(config: ProjectConfig, parser: configparser.ConfigParser) -> None:
    if parser.has_section("metadata"):
        config.name = config.name or parser.get("metadata", "name", fallback="")
    if parser.has_section("options.extras_require"):
        config.test_extras += [
            name
            for name in parser.options("options.extras_require")
            if TEST_EXTRA.match(name) and name not in config.test_extras
        ]
    setup_requires = parser.get("options", "setup_requires", fallback="")
    if any(builder in setup_requires for builder in SCM_VERSION_BUILDERS):
        config.scm_version = True
    if parser.get("options", "use_scm_version", fallback=""):
        config.scm_version = True


def _read_pkg_info(config: ProjectConfig, text: str) -> None:
    for line in text.splitlines():
        if line.startswith("Version:"):
            config.version = line.split(":", 1)[1].strip()
        elif line.startswith("Name:") and not config.name:
            config.name = line.split(":", 1)[1].strip()
        elif not line.strip():
            break


def parse_requirements(text: str, files: dict[str, str], path: str, depth: int = 0) -> list[str]:
    """Named requirements of a requirements file; `-r other.txt` followed within the
    snapshot; options, editable installs, URLs and paths left out."""
    found: list[str] = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-r ", "--requirement ", "-c ", "--constraint ")):
            if depth < 3 and line.startswith(("-r", "--requirement")):
                included = str(PurePosixPath(path).parent / line.split(None, 1)[1].strip())
                included = included.removeprefix("./")
                if included in files:
                    found += parse_requirements(files[included], files, included, depth + 1)
            continue
        if line.startswith("-") or "://" in line or line.startswith((".", "/")):
            continue
        found.append(line)
    return found


def _tox_deps(parser: configparser.ConfigParser, files: dict[str, str]) -> list[str]:
    deps: list[str] = []
    for section in parser.sections():
        if section != "testenv" and not section.startswith("testenv:py"):
            continue
        for line in parser.get(section, "deps", fallback="").splitlines():
            line = line.strip()
            if not line or "{" in line or line.startswith("#"):
                continue
            if line.startswith("-r"):
                included = line[2:].strip().removeprefix("{toxinidir}/")
                if included in files:
                    deps += parse_requirements(files[included], files, included)
                continue
            if line.startswith("-") or "://" in line:
                continue
            if re.match(r"^[\w,{}-]+:\s", line):
                continue  # `django32: Django>=3.2,<3.3`: only for one of tox's factors
            deps.append(line)
        if deps:
            break
    return deps


def _pytest_ini(
    files: dict[str, str],
    pyproject: dict,
    setup_cfg: configparser.ConfigParser,
    tox: configparser.ConfigParser,
) -> tuple[dict[str, str], str]:
    """The pytest configuration pytest itself would pick (same precedence), as text values."""
    for name in ("pytest.ini", ".pytest.ini"):
        if name in files:
            parser = _ini(files[name])
            if parser.has_section("pytest"):
                return dict(parser.items("pytest")), name
            return {}, name
    tool = pyproject.get("tool") if isinstance(pyproject.get("tool"), dict) else {}
    pytest_tool = tool.get("pytest") if isinstance(tool.get("pytest"), dict) else {}
    ini_options = pytest_tool.get("ini_options")
    if isinstance(ini_options, dict):
        return {key: _as_text(value) for key, value in ini_options.items()}, "pyproject.toml"
    if tox.has_section("pytest"):
        return dict(tox.items("pytest")), "tox.ini"
    if setup_cfg.has_section("tool:pytest"):
        return dict(setup_cfg.items("tool:pytest")), "setup.cfg"
    return {}, ""


def _as_text(value: object) -> str:
    if isinstance(value, list):
        return " ".join(shlex.quote(str(item)) for item in value)
    return str(value)
