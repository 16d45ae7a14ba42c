"""Recipe inference: the likely recipe from the repository's files, then, from what a try
reports, the next one to try.

Each step is one decision with a note a curator can read: install the test extras, add the
test requirements, name the pytest plugins the configuration needs, pretend a version where the
build takes it from version control, drop the addopts we cannot honour, and — after a try —
add the modules and fixtures the tests said were missing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fnmatch import fnmatch
from pathlib import PurePosixPath

from workers.recipes.project_files import PLUGIN_BY_INI_KEY, ProjectConfig
from workers.recipes.pytest_options import filter_addopts
from workers.recipes.recipe import Recipe
from workers.recipes.report import PYTEST_USAGE_ERROR, EnvironmentReport
from workers.sandbox.wheelhouse import FetchError, named_requirement

# Modules whose distribution has another name (the common cases; otherwise the module's name).
DISTRIBUTION_OF_MODULE = {
    "yaml": "PyYAML",
    "dateutil": "python-dateutil",
    "attr": "attrs",
    "bs4": "beautifulsoup4",
    "PIL": "Pillow",
    "sklearn": "scikit-learn",
    "cv2": "opencv-python-headless",
    "Crypto": "pycryptodome",
    "jwt": "PyJWT",
    "magic": "python-magic",
    "serial": "pyserial",
    "usb": "pyusb",
    "dns": "dnspython",
    "git": "GitPython",
    "OpenSSL": "pyOpenSSL",
    "google.protobuf": "protobuf",
    "zmq": "pyzmq",
    "slugify": "python-slugify",
    "multipart": "python-multipart",
    "pkg_resources": "setuptools",
    "typing_extensions": "typing-extensions",
}
# Fixtures that only a plugin provides.
PLUGIN_OF_FIXTURE = {
    "mocker": "pytest-mock",
    "class_mocker": "pytest-mock",
    "benchmark": "pytest-benchmark",
    "httpserver": "pytest-httpserver",
    "freezer": "pytest-freezer",
    "time_machine": "time-machine",
    "datadir": "pytest-datadir",
    "shared_datadir": "pytest-datadir",
    "snapshot": "syrupy",
    "caplog_": "pytest",
    "subtests": "pytest-subtests",
    "httpx_mock": "pytest-httpx",
    "requests_mock": "requests-mock",
    "fs": "pyfakefs",
    "event_loop": "pytest-asyncio",
    "aiohttp_client": "pytest-aiohttp",
    "xprocess": "pytest-xprocess",
    "faker": "Faker",
}
DEFAULT_PRETEND_VERSION = "0.0.0"


PYTEST_DEFAULT_FILES = ("test_*.py", "*_test.py")


def initial_recipe(config: ProjectConfig, *, python: str, test_files: Iterable[str] = ()) -> Recipe:
    recipe = Recipe(install="." if config.installable else "", python=python)
    if not config.installable:
        recipe = recipe.with_changes(
            note="the project has no pyproject.toml, setup.py or setup.cfg: it is not installed"
        )
    if config.installable and config.test_extras:
        extras = ",".join(config.test_extras)
        recipe = recipe.with_changes(
            install=f".[{extras}]", note=f"install the test extras: {extras}"
        )
    for group, packages in sorted(config.group_packages.items()):
        recipe = recipe.adding_packages(
            usable(packages), note=f"dependency group {group!r}: {', '.join(packages) or '-'}"
        )
    for path, packages in sorted(config.requirement_files.items()):
        if _for_tests(path):
            recipe = recipe.adding_packages(usable(packages), note=f"test requirements in {path}")
    if config.tox_deps:
        recipe = recipe.adding_packages(usable(config.tox_deps), note="tox's test deps")
    plugins = sorted(
        {plugin for key, plugin in PLUGIN_BY_INI_KEY.items() if key in config.pytest_ini}
    )
    if plugins:
        recipe = recipe.adding_packages(
            plugins, note=f"pytest plugins its configuration ({config.pytest_ini_file}) names"
        )
    version = config.version or DEFAULT_PRETEND_VERSION
    if config.scm_version:
        recipe = recipe.with_changes(
            environment=(*recipe.environment, ("SETUPTOOLS_SCM_PRETEND_VERSION", version)),
            note=f"the build takes its version from version control, which an archive lacks: "
            f"SETUPTOOLS_SCM_PRETEND_VERSION={version}",
        )
    if config.pdm_scm_version:
        recipe = recipe.with_changes(
            environment=(*recipe.environment, ("PDM_BUILD_SCM_VERSION", version)),
            note=f"pdm takes its version from version control: PDM_BUILD_SCM_VERSION={version}",
        )
    unusual = sorted(
        {
            PurePosixPath(path).name
            for path in test_files
            if not any(fnmatch(PurePosixPath(path).name, p) for p in PYTEST_DEFAULT_FILES)
        }
    )
    if unusual and "python_files" not in config.pytest_ini:
        recipe = recipe.with_changes(
            pytest_options=(*recipe.pytest_options, "-o", "python_files=test*.py *_test.py"),
            note=f"test files pytest would not collect by default ({', '.join(unusual[:5])}): "
            "python_files=test*.py *_test.py",
        )
    addopts = config.pytest_ini.get("addopts")
    if addopts is not None:
        filtered = filter_addopts(addopts, installed_plugins=frozenset(recipe_names(recipe)))
        if filtered.dropped:
            recipe = recipe.with_changes(
                pytest_addopts=filtered.addopts, note="; ".join(filtered.notes)
            )
    return recipe


def next_recipe(
    recipe: Recipe,
    report: EnvironmentReport,
    *,
    tried: Iterable[Recipe],
    own_packages: frozenset[str] = frozenset(),
) -> Recipe | None:
    """The next recipe to try after `report`, or None when nothing more can be learnt from it.

    `own_packages` are the project's own top-level modules: one of them missing is a file the
    build generates or the archive lacks, which no package brings.
    """
    tried = list(tried)
    candidate = recipe
    modules = [m for m in report.missing_modules() if m.split(".")[0] not in own_packages]
    packages = [distribution_of(module) for module in modules]
    if packages:
        candidate = candidate.adding_packages(
            packages, note=f"the tests import {', '.join(modules)}, which nothing installed"
        )
    fixtures = [f for f in report.missing_fixtures() if f in PLUGIN_OF_FIXTURE]
    if fixtures:
        candidate = candidate.adding_packages(
            sorted({PLUGIN_OF_FIXTURE[f] for f in fixtures}),
            note=f"the tests use the fixtures {', '.join(fixtures)}, which a plugin provides",
        )
    refused = not report.collected and report.exit_code == PYTEST_USAGE_ERROR
    if candidate.packages == recipe.packages and refused and recipe.pytest_addopts != "":
        # pytest refused the options left in addopts: run with none of them.
        candidate = candidate.with_changes(
            pytest_addopts="", note="pytest refused the repository's addopts: none are used"
        )
    if candidate == recipe or any(candidate == earlier for earlier in tried):
        return None
    return candidate


def distribution_of(module: str) -> str:
    top = module.split(".")[0]
    return DISTRIBUTION_OF_MODULE.get(module) or DISTRIBUTION_OF_MODULE.get(top) or top


def recipe_names(recipe: Recipe) -> list[str]:
    names = []
    for package in recipe.packages:
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", package)
        if match:
            names.append(match.group(1).lower().replace("_", "-"))
    return names


def usable(requirements: list[str]) -> list[str]:
    """Requirements the wheelhouse can fetch (named ones; no URLs, paths or options)."""
    kept = []
    for requirement in requirements:
        try:
            named_requirement(requirement)
        except FetchError:
            continue
        kept.append(requirement)
    return kept


def _for_tests(path: str) -> bool:
    name = path.lower()
    return any(word in name for word in ("test", "dev", "ci"))
