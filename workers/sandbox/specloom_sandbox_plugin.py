"""pytest plugin loaded into every sandboxed run (`-p specloom_sandbox_plugin`).

PYTEST_DONT_REWRITE: it has no asserts, and rewriting it cost every run a millisecond or two.

It is copied next to the working copy and imported by the repository's own interpreter, so it
must stay standalone: only pytest, and coverage when the run measures it. It

- keeps only the requested tests (exact ids, or ids of a class/module/folder and all below),
  which unlike command-line ids never aborts the run when one id does not exist; functions and
  classes that no requested id names or lies in are not even made into items, as pytest does
  for command-line ids (making and then deselecting them cost every run time per test);
- switches coverage.py's dynamic context to the node id around each test;
- appends events (collection errors, unmatched ids, started and finished tests with their exact
  node ids, outcomes and failure messages) to a JSON-lines file as they happen, so a run cut
  short by a limit still tells what it did. These events are the run's only report: JUnit XML
  said nothing more (its classname/name cannot even be turned back into node ids) and writing
  it cost every run 15-30 ms, a tenth of a small grade.
"""

from __future__ import annotations

import json
import sys

import pytest

MESSAGE_LIMIT = 8000  # the end of a traceback says what went wrong; keep that part


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("specloom-sandbox")
    group.addoption("--specloom-events", default=None, help="JSON-lines file for run events")
    group.addoption("--specloom-select", default=None, help="JSON file: list of ids to run")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_Recorder(config), "specloom-sandbox-recorder")


class _Recorder:
    def __init__(self, config: pytest.Config) -> None:
        events_path = config.getoption("specloom_events")
        select_path = config.getoption("specloom_select")
        self._events = open(events_path, "a", encoding="utf-8") if events_path else None  # noqa: SIM115
        self._selectors: list[str] | None = None
        self._wanted: set[str] = set()
        self._leading_to_selected: set[str] = set()
        if select_path:
            with open(select_path, encoding="utf-8") as selection:
                self._selectors = json.load(selection)
            self._wanted = set(self._selectors)
            self._leading_to_selected = _ancestors(self._selectors)
        self._phases: dict[str, list[pytest.TestReport]] = {}
        self._coverage = _current_coverage()

    def _emit(self, **event: object) -> None:
        if self._events is not None:
            self._events.write(json.dumps(event) + "\n")
            self._events.flush()

    def pytest_pycollect_makeitem(self, collector: pytest.Collector, name: str) -> list | None:
        # Called before pytest's default collection (trylast) and before the hooks registered
        # earlier than this plugin (installed plugins, the rootdir's conftest.py): a function or
        # class that no requested id names or lies in gets no item, whichever hook would make
        # it; items are named parent::name, so none of them could have been requested. None
        # lets the other hooks make the item as usual.
        if self._selectors is None:
            return None
        candidate = f"{collector.nodeid}::{name}"
        if candidate in self._leading_to_selected or _selectors_of(candidate, self._wanted):
            return None
        return []  # nothing requested is this function or class, or inside it

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            path = report.nodeid or str(report.fspath)
            self._emit(kind="collection_error", path=path, message=report.longreprtext)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        if self._selectors is None:
            return
        wanted = self._wanted
        matched: set[str] = set()
        keep, drop = [], []
        for item in items:
            hits = _selectors_of(item.nodeid, wanted)
            matched |= hits
            (keep if hits else drop).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep
        unmatched = [selector for selector in self._selectors if selector not in matched]
        self._emit(kind="unmatched", ids=unmatched)

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        # Tells which test was running if a limit kills the run before it finishes.
        self._emit(kind="started", nodeid=nodeid)
        if self._coverage is not None:
            self._coverage.switch_context(nodeid)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._phases.setdefault(report.nodeid, []).append(report)

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        if self._coverage is not None:
            # Lines run between tests (fixtures torn down late, collection) belong to no test.
            self._coverage.switch_context("")
        reports = self._phases.pop(nodeid, [])
        duration = sum(report.duration for report in reports)
        outcome, message = _outcome(reports)
        self._emit(
            kind="finished", nodeid=nodeid, outcome=outcome, duration=duration, message=message
        )

    def pytest_unconfigure(self) -> None:
        if self._events is not None:
            self._events.close()


def _ancestors(selectors: list[str]) -> set[str]:
    """The ids of the classes and functions that hold a selected test (the selectors' own
    prefixes at a '::' or the '[' of parameters)."""
    ancestors = set()
    for selector in selectors:
        position = selector.find("::")
        while position != -1:
            ancestors.add(selector[:position])
            position = selector.find("::", position + 2)
        if (bracket := selector.find("[")) != -1:
            ancestors.add(selector[:bracket])
    return ancestors


def _selectors_of(nodeid: str, wanted: set[str]) -> set[str]:
    """The selectors that name this test: itself, or one of its parents (class, module, dir)."""
    hits = {nodeid} & wanted
    for separator in ("::", "/"):
        position = nodeid.find(separator)
        while position != -1:
            prefix = nodeid[:position]
            if prefix in wanted:
                hits.add(prefix)
            position = nodeid.find(separator, position + len(separator))
    return hits


def _outcome(reports: list[pytest.TestReport]) -> tuple[str, str]:
    """The outcome as pytest counts it (a failing call fails, a failing fixture errors) and what
    went wrong: the traceback's end, or why the test was skipped."""
    for report in reports:
        if report.failed:
            outcome = "failed" if report.when == "call" else "error"
            return outcome, report.longreprtext[-MESSAGE_LIMIT:]
    for report in reports:
        if report.skipped:
            return "skipped", _skip_reason(report)[-MESSAGE_LIMIT:]
    return "passed", ""


def _skip_reason(report: pytest.TestReport) -> str:
    # A skip's longrepr is (path, line, "Skipped: reason"); an xfail keeps its reason apart.
    if getattr(report, "wasxfail", None):
        return f"xfail: {report.wasxfail}"
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return report.longreprtext


def _current_coverage():
    # A coverage run (`coverage run -m pytest`) has imported coverage already; importing it
    # here otherwise would cost every ordinary run ~40 ms for nothing.
    coverage = sys.modules.get("coverage")
    return coverage.Coverage.current() if coverage is not None else None
