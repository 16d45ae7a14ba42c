"""Our pytest runs, independent of the repository's own pytest options.

A repository's `addopts` may ask for plugins we do not install (`--cov`, `-n auto`), write
reports of their own, stop at the first failure, or replay the last failures: any of it would
change what a run collects or reports. Our runs keep the options that only shape how pytest
collects and reports (markers, doctests, import mode, warnings) and drop the rest, each with a
note saying why.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

# Options that take a value, as separate words or after "=".
_VALUED = {
    "-p",
    "-k",
    "-m",
    "-W",
    "-o",
    "-c",
    "-r",
    "--tb",
    "--import-mode",
    "--rootdir",
    "--ignore",
    "--ignore-glob",
    "--deselect",
    "--doctest-glob",
    "--durations",
    "--durations-min",
    "--confcutdir",
    "--basetemp",
    "--log-level",
    "--log-format",
    "--log-cli-level",
    "--maxfail",
    "--junitxml",
    "--junit-xml",
    "--cov",
    "--cov-report",
    "--cov-config",
    "--cov-fail-under",
    "--cov-context",
    "-n",
    "--numprocesses",
    "--dist",
    "--maxprocesses",
    "--reruns",
    "--reruns-delay",
    "--timeout",
    "--timeout-method",
    "--randomly-seed",
    "--html",
    "--benchmark-sort",
    "--benchmark-columns",
    "--benchmark-group-by",
}
# Core pytest options that keep a run's results meaning the same: kept.
_KEPT = {
    "-m",
    "-W",
    "-r",
    "--tb",
    "--import-mode",
    "--ignore",
    "--ignore-glob",
    "--deselect",
    "--doctest-modules",
    "--doctest-glob",
    "--doctest-continue-on-failure",
    "--strict-markers",
    "--strict-config",
    "--strict",
    "--log-level",
    "--log-format",
    "--confcutdir",
    "-q",
    "--quiet",
    "-v",
    "--verbose",
    "-l",
    "--showlocals",
    "-s",
    "--capture",
    "--durations",
    "--durations-min",
    "--color",
    "--code-highlight",
    "-ra",
    "-rA",
    "-rs",
    "-rxXs",
    "--assert",
}
# Why a dropped option is dropped, by its prefix.
_WHY = (
    (
        ("--cov", "--no-cov"),
        "coverage is measured by the sandbox itself (pytest-cov would collide)",
    ),
    (("-n", "--numprocesses", "--dist", "--maxprocesses"), "runs are not split across processes"),
    (("-x", "--exitfirst", "--maxfail", "--sw", "--stepwise"), "every selected test must run"),
    (("--lf", "--last-failed", "--ff", "--failed-first", "--nf", "--new-first"), "no cache"),
    (("--junitxml", "--junit-xml", "--html", "--resultlog"), "the sandbox writes its own report"),
    (("--reruns", "--reruns-delay", "--only-rerun"), "flakiness is measured, not retried away"),
    (("-p",), "plugins are loaded only when the recipe installs them"),
    (("-k", "-c", "--rootdir", "--basetemp", "-o"), "the sandbox decides what runs and where"),
    (("--benchmark", "--randomly", "--timeout"), "needs a plugin the recipe does not install"),
)


@dataclass
class FilteredOptions:
    addopts: str
    dropped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def filter_addopts(
    addopts: str, *, installed_plugins: frozenset[str] = frozenset()
) -> FilteredOptions:
    """The repository's addopts with only what keeps a run's results meaning the same."""
    try:
        words = shlex.split(addopts)
    except ValueError:
        return FilteredOptions("", [addopts], [f"addopts could not be parsed: {addopts!r}"])
    kept: list[str] = []
    dropped: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        name, has_value, _value = word.partition("=")
        takes_value = name in _VALUED and not has_value
        option = [word, words[index + 1]] if takes_value and index + 1 < len(words) else [word]
        index += len(option)
        if _keep(name, option, installed_plugins):
            kept += option
        else:
            dropped.append(" ".join(option))
    notes = [f"dropped `{option}` from addopts: {_why(option)}" for option in dropped]
    return FilteredOptions(shlex.join(kept), dropped, notes)


def _keep(name: str, option: list[str], installed_plugins: frozenset[str]) -> bool:
    if not name.startswith("-"):
        return False  # a path: the sandbox chooses what runs
    if name in ("--timeout", "--timeout-method"):
        return "pytest-timeout" in installed_plugins
    if name == "-p" and len(option) == 2:
        return option[1].startswith("no:") and option[1] != "no:cacheprovider"
    if name.startswith("-r") and len(name) > 2 and not name.startswith("--"):
        return True  # -rA, -rfE...: what the summary shows
    return name in _KEPT


def _why(option: str) -> str:
    name = option.split(" ", 1)[0].split("=", 1)[0]
    for prefixes, why in _WHY:
        if any(name == prefix or name.startswith(prefix + "-") for prefix in prefixes):
            return why
    return "not an option that keeps the meaning of a run's results"
