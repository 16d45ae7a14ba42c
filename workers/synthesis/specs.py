"""Specifications for one cluster: checkable requirements, each with the tests that verify it.

Every spec says one thing a solution must do and claims the FAIL_TO_PASS tests that check it;
validation keeps the claims its runs bear out (workers.linkage) and shows the rest unverified.
There are no templates that hold for any function ("behaves as its tests show", "keeps its
interface", "its tests pass unchanged"): a spec exists only for something checkable.

Per function to implement:
- its *contract* (functional): signature, purpose, what it returns or yields, the attributes it
  sets; it stands for the function's part of the reference, and claims the hidden tests that run
  its body (validation keeps those that fail without that part);
- one *error-handling* spec per exception and message its body raises, claiming the tests that
  run the raise or expect that exception;
- a *state* spec when its tests read the attributes it sets;
- a *parameter* spec per documented optional parameter that hidden tests pass;
- an *option* spec per command-line option of its module that hidden tests use;
- *behaviour* specs, one per hidden test function that calls it directly (its parametrised
  cases are one behaviour): the return value or effect that test asserts, in its own words.

Declared dependencies come from resolved calls only (a contract calls another function's
contract) and from a spec refining its function's contract; observed ones come from validation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from workers.synthesis.briefs import FunctionBrief, display_name
from workers.synthesis.callgraph import CallGraph
from workers.synthesis.coverage_map import CoverageMap
from workers.synthesis.documents import name_words
from workers.synthesis.examples import Example, TestSources
from workers.synthesis.functions import FunctionInfo, FunctionTable, RaiseInfo
from workers.synthesis.proposals import DependencyProposal, SpecProposal

_BEHAVIOURS_PER_FUNCTION = 3
_BEHAVIOURS_PER_TASK = 9
_MAX_CODE = 260
_MAX_NOTE = 160


@dataclass
class ClusterSpecs:
    specs: list[SpecProposal]
    dependencies: list[DependencyProposal]
    keys_by_function: dict[str, list[str]]  # function id -> its spec keys
    outside_callers: list[str]  # function ids


def build_specs(
    *,
    functions: list[FunctionInfo],
    briefs: dict[str, FunctionBrief],
    texts: dict[str, str],
    table: FunctionTable,
    graph: CallGraph,
    cmap: CoverageMap,
    tests: TestSources,
    fail_to_pass: list[str],
) -> ClusterSpecs:
    builder = _Builder(functions, briefs, table, tests)
    f2p = sorted(set(fail_to_pass))
    covering = {f.id: sorted(cmap.tests_of.get(f.id, set()) & set(f2p)) for f in functions}
    # Hidden tests the coverage run saw run none of the functions (they ran them in a
    # subprocess, at import, through a module `__getattr__`) still fail without them: every
    # contract claims them, and validation keeps each claim only where the test fails without
    # that contract's part.
    unseen = sorted(set(f2p) - {t for tests in covering.values() for t in tests})
    contract: dict[str, str] = {}
    for info in functions:
        contract[info.id] = builder.contract(info, sorted({*covering[info.id], *unseen}))
    for info in functions:
        for raised in briefs[info.id].raises:
            claims = _error_claims(info, raised, cmap, tests, covering[info.id])
            key = builder.add(
                "error-handling",
                _error_statement(info, raised),
                f"The exception and message are part of `{info.qualname}`'s contract; "
                f"{len(claims)} hidden test(s) run this path or expect `{raised.exception}`.",
                claims,
                info,
            )
            builder.raised[key] = raised.exception.rsplit(".", 1)[-1]
            builder.refines(key, contract[info.id])
        builder.state(info, covering[info.id], contract[info.id])
        builder.parameters(info, texts, covering[info.id], contract[info.id])
    builder.options(f2p, contract)
    builder.behaviours(f2p, covering)
    for info in functions:
        for callee in sorted(graph.callees.get(info.id, set()) & set(contract)):
            if graph.is_exact(info.id, callee):
                builder.deps.append(
                    DependencyProposal(contract[info.id], contract[callee], "calls")
                )
    in_cluster = {f.id for f in functions}
    outside = sorted(
        {
            caller
            for fid in in_cluster
            for caller in graph.callers.get(fid, set())
            if caller not in in_cluster
            and caller in table.functions
            and not table.functions[caller].nested
        }
    )
    unique: dict[tuple[str, str, str], DependencyProposal] = {}
    for dep in builder.deps:
        if dep.from_key != dep.to_key:
            unique.setdefault((dep.from_key, dep.to_key, dep.relation), dep)
    return ClusterSpecs(
        specs=builder.specs,
        dependencies=list(unique.values()),
        keys_by_function=builder.keys,
        outside_callers=outside,
    )


class _Builder:
    def __init__(
        self,
        functions: list[FunctionInfo],
        briefs: dict[str, FunctionBrief],
        table: FunctionTable,
        tests: TestSources,
    ) -> None:
        self.functions = functions
        self.briefs = briefs
        self.table = table
        self.tests = tests
        self.specs: list[SpecProposal] = []
        self.deps: list[DependencyProposal] = []
        self.keys: dict[str, list[str]] = {f.id: [] for f in functions}
        self.behaviour_keys: set[str] = set()
        # Error-handling spec key -> the exception's short name (`Bad` for `pkg.errors.Bad`).
        self.raised: dict[str, str] = {}

    def add(
        self,
        kind: str,
        statement: str,
        rationale: str,
        claims,
        info: FunctionInfo | None,
        *,
        owns: bool = False,
        part: str | None = None,
    ) -> str:
        key = f"S{len(self.specs) + 1}"
        if part is None:
            part = self.briefs[info.id].part if info is not None else ""
        self.specs.append(
            SpecProposal(key, kind, statement, rationale, sorted(set(claims)), part, owns)
        )
        if info is not None:
            self.keys[info.id].append(key)
        return key

    def refines(self, key: str, contract_key: str) -> None:
        self.deps.append(DependencyProposal(key, contract_key, "constrains"))

    def contract(self, info: FunctionInfo, claims: list[str]) -> str:
        brief = self.briefs[info.id]
        name = display_name(self.table, info.id)
        parts = [f"`{info.qualname}` (`{info.signature}`): {_sentence(brief.purpose)}"]
        parts.append(_returns(brief))
        if brief.facts.self_attributes:
            shown = ", ".join(f"`self.{a}`" for a in brief.facts.self_attributes[:6])
            parts.append(f"It sets {shown}.")
        if brief.uses:
            parts.append("It builds on " + ", ".join(f"`{u}`" for u in brief.uses[:5]) + ".")
        source = brief.purpose_source
        return self.add(
            "functional",
            " ".join(p for p in parts if p),
            f"The contract of `{name}` (purpose from {source}); it stands for the function's "
            f"part of the solution, and claims the {len(claims)} hidden test(s) that run it.",
            claims,
            info,
            owns=True,
        )

    def state(self, info: FunctionInfo, covering: list[str], contract_key: str) -> None:
        facts = self.briefs[info.id].facts
        attributes = set(facts.self_attributes)
        if not attributes:
            return
        claims = [t for t in covering if self.tests.attributes_read(t) & attributes]
        read = sorted({a for t in claims for a in self.tests.attributes_read(t) & attributes})
        if not read:
            return
        described = ", ".join(
            f"`self.{a}`"
            + (f" (from its `{facts.from_params[a]}` argument)" if a in facts.from_params else "")
            for a in read[:6]
        )
        key = self.add(
            "functional",
            f"After `{display_name(self.table, info.id)}` runs, the object holds {described}: "
            "code that reads these attributes finds them set.",
            f"{len(claims)} hidden test(s) read these attributes after the call.",
            claims,
            info,
        )
        self.refines(key, contract_key)

    def parameters(
        self, info: FunctionInfo, texts: dict[str, str], covering: list[str], contract_key: str
    ) -> None:
        doc = self.briefs[info.id].doc
        for param in self.briefs[info.id].params:
            if not param.default or not doc.params.get(param.name):
                continue
            claims = [t for t in covering if param.name in self.tests.keywords_passed(t, info.name)]
            if not claims:
                continue
            key = self.add(
                "functional",
                f"`{info.qualname}` honours its `{param.name}` parameter (default "
                f"`{param.default}`): {_sentence(doc.params[param.name])}",
                f"Documented in the docstring; {len(claims)} hidden test(s) pass `{param.name}=`.",
                claims,
                info,
            )
            self.refines(key, contract_key)

    def options(self, f2p: list[str], contract: dict[str, str]) -> None:
        seen: set[tuple[str, ...]] = set()
        by_qualname = {(f.path, f.qualname): f for f in self.functions}
        for info in self.functions:
            for option in self.briefs[info.id].options:
                if option.flags in seen:
                    continue
                seen.add(option.flags)
                claims = [t for t in f2p if _uses_flag(self.tests.strings(t), option.flags)]
                if not claims:
                    continue
                owner = by_qualname.get((option.path, option.function))
                key = self.add(
                    "functional",
                    f"The command line defined in `{option.path}` accepts {option.describe()}.",
                    f"Defined in `{option.path}`; {len(claims)} hidden test(s) use it.",
                    claims,
                    owner,
                    part=self.briefs[owner.id].part if owner else "",
                )
                if owner is not None:
                    self.refines(key, contract[owner.id])

    def behaviours(self, f2p: list[str], covering: dict[str, list[str]]) -> None:
        """One spec per hidden test function that checks a function of the task: the ones
        that call it first, then those that reach it through a public entry point (each such
        test goes to the most specific function it runs)."""
        errors = {s.key: s for s in self.specs if s.kind == "error-handling"}
        reach = {f.id: len(covering[f.id]) for f in self.functions}
        chosen: dict[str, list[tuple[str, Example, list[str], bool]]] = {}
        for info in self.functions:
            name = info.class_name.rsplit(".", 1)[-1] if info.name == "__init__" else info.name
            by_function: dict[str, list[str]] = {}
            for nodeid in covering[info.id]:
                by_function.setdefault(nodeid.split("[", 1)[0], []).append(nodeid)
            direct, through = [], []
            for test_function, cases in sorted(by_function.items()):
                examples = self.tests.examples_for(cases[0], name)
                if examples:
                    # A direct call reads best; an assert on the call's result shows the call
                    # in its setup line.
                    example = min(
                        examples, key=lambda e: (e.kind == "raises", not e.direct, len(e.code))
                    )
                    if example.kind == "raises" and self._claimed_by_error(errors, info, cases):
                        continue
                    direct.append((test_function, example, cases, False))
                    continue
                runs = [f for f in self.functions if set(cases) & set(covering[f.id])]
                if min(runs, key=lambda f: (reach[f.id], f.id)) is not info:
                    continue
                # Which assert runs the function is not known: the test's first check that
                # calls something is what its author put first.
                anything = [
                    e
                    for e in self.tests.examples_for(cases[0], None)
                    if "(" in e.code and not self._repeats_an_error(errors, e, cases)
                ]
                if anything:
                    through.append((test_function, anything[0], cases, True))
            rank = lambda c: (-len(c[2]), len(c[1].code), c[0])  # noqa: E731
            chosen[info.id] = (sorted(direct, key=rank), sorted(through, key=rank))
        # Tests that call a function come first; round-robin over the functions, so that every
        # function gets its behaviours before any gets many; a test function is used once.
        taken = 0
        used: set[str] = set()
        for kind in (0, 1):
            for _round in range(_BEHAVIOURS_PER_FUNCTION):
                for info in self.functions:
                    picks = [p for p in chosen[info.id][kind] if p[0] not in used]
                    mine = sum(1 for k in self.keys[info.id] if k in self.behaviour_keys)
                    if not picks or taken >= _BEHAVIOURS_PER_TASK:
                        continue
                    if mine >= _BEHAVIOURS_PER_FUNCTION:
                        continue
                    test_function, example, cases, via = picks[0]
                    used.add(test_function)
                    key = self._behaviour(info, test_function, example, cases, through=via)
                    self.behaviour_keys.add(key)
                    taken += 1

    def _repeats_an_error(self, errors: dict, example: Example, cases: list[str]) -> bool:
        """Whether `example` (a test's `raises` check) says again what an error-handling spec
        verified by the same test already says: the same exception, which a second spec would
        only count twice."""
        if example.kind != "raises":
            return False
        short = example.exception.rsplit(".", 1)[-1]
        return any(
            set(cases) & set(spec.verified_by) and self.raised.get(key) == short
            for key, spec in errors.items()
        )

    def _claimed_by_error(self, errors: dict, info: FunctionInfo, cases: list[str]) -> bool:
        mine = [errors[k] for k in self.keys[info.id] if k in errors]
        return any(set(cases) & set(spec.verified_by) for spec in mine)

    def _behaviour(
        self,
        info: FunctionInfo,
        test_function: str,
        example: Example,
        cases: list[str],
        *,
        through: bool = False,
    ) -> str:
        code, note = _code_and_note(example.code)
        prose = _test_prose(test_function, info.name)
        name = display_name(self.table, info.id)
        head = f"`{name}` {prose}" if prose else f"`{name}`"
        if through:
            # The test reaches the function through a public entry point and fails without it.
            head = (prose[:1].upper() + prose[1:]) if prose else "A public call"
            head += f" (a hidden test that runs `{name}` on the way)"
        where = f" (for each case of {note})" if note else ""
        outcome = f"it raises `{example.exception}`" if example.kind == "raises" else "this holds"
        if "\n" in code:
            statement = f"{head}{where}: {outcome}:\n\n```python\n{code}\n```"
        else:
            statement = f"{head}{where}: `{code}`: {outcome}."
        test_name = test_function.rsplit("::", 1)[-1]
        return self.add(
            "error-handling" if example.kind == "raises" else "functional",
            statement,
            f"What the hidden test `{test_name}` asserts ({len(cases)} case(s))"
            + (f", running `{name}` on the way." if through else "."),
            cases,
            info,
        )


def _returns(brief: FunctionBrief) -> str:
    facts = brief.facts
    annotation = (
        brief.info.signature.rsplit("->", 1)[1].strip() if "->" in brief.info.signature else ""
    )
    if facts.is_generator:
        return "It is a generator: it yields its results lazily" + (
            f" ({_lower_first(brief.doc.returns)})." if brief.doc.returns else "."
        )
    if brief.doc.returns:
        return f"It returns {_lower_first(_strip_period(brief.doc.returns))}."
    if annotation and annotation != "None":
        return f"It returns a `{annotation}`."
    if facts.returns_value:
        return "It returns its result (a value, not `None`)."
    if brief.info.name == "__init__":
        return ""
    return "It returns `None`; its effect is on state."


def _error_claims(
    info: FunctionInfo, raised: RaiseInfo, cmap: CoverageMap, tests: TestSources, covering
) -> list[str]:
    # Coverage of the raise line is direct evidence; a test that expects the exception by name
    # is the other (coverage misses lines run in a subprocess).
    short = raised.exception.rsplit(".", 1)[-1]
    claims = []
    for test in covering:
        if info.path in cmap.lines_of.get(test, {}):
            if cmap.covers_line(test, info.path, raised.line):
                claims.append(test)
        elif short in tests.raised_names(test):
            claims.append(test)
    return claims


def _error_statement(info: FunctionInfo, raised: RaiseInfo) -> str:
    allowed = set(info.params) | {"self", "cls"}
    # A condition over the parameters is a contract; one over locals would quote the body.
    when = ""
    if raised.condition and raised.condition_names and set(raised.condition_names) <= allowed:
        when = f" when `{raised.condition}`"
    if raised.message:
        template = "{" in raised.message
        kind = "a message of the form" if template else "the message"
        return (
            f"`{info.qualname}` raises `{raised.exception}`{when}, with {kind} '{raised.message}'."
        )
    return f"`{info.qualname}` raises `{raised.exception}`{when}."


def _uses_flag(strings: set[str], flags: tuple[str, ...]) -> bool:
    return any(
        s == f or s.startswith(f"{f}=") for s in strings for f in flags if f.startswith("--")
    )


def _code_and_note(code: str) -> tuple[str, str]:
    """An example's code as written (one line stays one line), and its parametrisation."""
    note = ""
    lines = []
    for line in code.splitlines():
        if line.startswith("# parametrised: "):
            note = line[len("# parametrised: ") :]
        else:
            lines.append(line.rstrip())
    text = "\n".join(lines).strip("\n")
    if len(text) > _MAX_CODE:
        text = text[: _MAX_CODE - 3] + "..."
    if len(note) > _MAX_NOTE:
        note = note[: _MAX_NOTE - 3] + "..."
    if note:
        names, _, values = note.partition(" in ")
        note = f"`{names}` in `{values.replace('`', chr(39))}`"
    return (text.replace("`", "'") if "\n" not in text else text), note


def _test_prose(test_function: str, function_name: str) -> str:
    """`tests/t.py::TestWrap::test_wrap_keeps_long_words` -> "keeps long words"."""
    name = test_function.rsplit("::", 1)[-1]
    words = name_words(re.sub(r"^test_?", "", name)).split()
    own = name_words(function_name).split()
    while words and own and words[: len(own)] == own:
        words = words[len(own) :]
    return " ".join(words)


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?", ":")) else f"{text}."


def _strip_period(text: str) -> str:
    return text.rstrip(". ")


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text
