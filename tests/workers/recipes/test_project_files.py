"""Test dependencies and pytest settings read from a repository's files, as data."""

from workers.recipes.infer import initial_recipe
from workers.recipes.project_files import parse_requirements, read_project, wanted_files

PYPROJECT = """
[build-system]
requires = ["hatchling", "hatch-vcs"]
build-backend = "hatchling.build"

[project]
name = "demo"
dynamic = ["version"]

[project.optional-dependencies]
test = ["pytest-mock", "hypothesis>=6"]
docs = ["sphinx"]

[dependency-groups]
dev = ["freezegun", {include-group = "lint"}]
lint = ["ruff"]

[tool.pytest.ini_options]
addopts = ["--cov=demo", "-ra", "--strict-markers"]
timeout = 30
"""


def test_it_reads_extras_groups_plugins_and_a_version_from_version_control():
    config = read_project({"pyproject.toml": PYPROJECT})
    assert config.installable and config.name == "demo"
    assert config.test_extras == ["test"]
    assert config.group_packages == {"dev": ["freezegun", "ruff"]}
    assert config.scm_version
    assert config.pytest_ini_file == "pyproject.toml"
    recipe = initial_recipe(config, python="3.11")
    assert recipe.install == ".[test]"
    assert recipe.packages == ("freezegun", "ruff", "pytest-timeout")
    assert dict(recipe.environment) == {"SETUPTOOLS_SCM_PRETEND_VERSION": "0.0.0"}
    assert recipe.pytest_addopts == "-ra --strict-markers"
    assert any("--cov=demo" in note for note in recipe.notes)


def test_an_sdists_own_version_is_the_pretend_version():
    config = read_project(
        {
            "setup.cfg": "[metadata]\nname = old\n[options]\nsetup_requires = setuptools_scm\n",
            "setup.py": "from setuptools import setup\nsetup(use_scm_version=True)\n",
            "PKG-INFO": "Metadata-Version: 2.1\nName: old\nVersion: 4.2.1\n\nbody\n",
        }
    )
    recipe = initial_recipe(config, python="3.11")
    assert dict(recipe.environment) == {"SETUPTOOLS_SCM_PRETEND_VERSION": "4.2.1"}


def test_requirements_files_and_tox_deps_are_followed_but_never_urls_or_options():
    files = {
        "requirements-test.txt": "-r requirements/base.txt\npytest>=7\n-e .\nhttps://x/y.whl\n"
        "--index-url https://evil\n# comment\nmock ; python_version < '3.3'\n",
        "requirements/base.txt": "attrs\n",
        "tox.ini": (
            "[testenv]\ndeps =\n    freezegun\n    -rrequirements-test.txt\n    {[base]deps}\n"
        ),
    }
    assert parse_requirements(files["requirements-test.txt"], files, "requirements-test.txt") == [
        "attrs",
        "pytest>=7",
        "mock ; python_version < '3.3'",
    ]
    config = read_project(files)
    assert config.tox_deps == ["freezegun", "attrs", "pytest>=7", "mock ; python_version < '3.3'"]
    assert not config.installable
    recipe = initial_recipe(config, python="3.11")
    assert recipe.install == ""
    assert "freezegun" in recipe.packages and "attrs" in recipe.packages


def test_only_the_files_it_reads_are_fetched():
    paths = ["pyproject.toml", "src/demo/__init__.py", "requirements-dev.txt", "docs/conf.py"]
    assert wanted_files(paths) == ["pyproject.toml", "requirements-dev.txt"]


def test_pytest_ini_wins_over_other_configuration_files():
    config = read_project(
        {
            "pytest.ini": "[pytest]\naddopts = -x\n",
            "setup.cfg": "[tool:pytest]\naddopts = -q\n",
        }
    )
    assert (config.pytest_ini, config.pytest_ini_file) == ({"addopts": "-x"}, "pytest.ini")


def test_tox_deps_for_one_factor_only_are_left_out():
    config = read_project(
        {
            "tox.ini": "[testenv]\nextras = dev\ndeps =\n    mock\n"
            "    django111: Django>=1.11,<1.12\n    django32: Django>=3.2,<3.3\n",
        }
    )
    assert config.tox_deps == ["mock"]


def test_test_extras_are_preferred_to_broader_development_extras():
    config = read_project(
        {
            "setup.cfg": "[options.extras_require]\ndev =\n    tox\n    flake8\n"
            "tests =\n    pytest-mock\n",
            "setup.py": "from setuptools import setup\nsetup()\n",
        }
    )
    assert config.test_extras == ["tests"]
    only_dev = read_project({"setup.cfg": "[options.extras_require]\ndev =\n    tox\n"})
    assert only_dev.test_extras == ["dev"]


def test_unittest_style_files_pytest_would_skip_are_collected():
    config = read_project({"setup.py": "from setuptools import setup\nsetup()\n"})
    recipe = initial_recipe(config, python="3.11", test_files=["tests/test.py"])
    assert recipe.pytest_options == ("-o", "python_files=test*.py *_test.py")
    assert "test.py" in recipe.notes[-1]
    usual = initial_recipe(config, python="3.11", test_files=["tests/test_a.py"])
    assert usual.pytest_options == ()
    configured = read_project({"pytest.ini": "[pytest]\npython_files = check_*.py\n"})
    assert initial_recipe(configured, python="3.11", test_files=["t/test.py"]).pytest_options == ()
