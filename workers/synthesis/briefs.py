"""A brief per function to implement: its contract and examples, from non-hidden sources.

The brief is what a solver gets to work from: signature, purpose (the docstring, or what the
docs and call sites say), parameters, return value, raised errors with their messages, effects
on attributes, options and neighbouring docs, and examples from the docstring's doctests, the
README and docs pages, the tests that stay visible, and the call sites. The removed body is
read only for *facts* a signature would state anyway (it returns a value, it is a generator,
which exceptions and messages it raises, which attributes it sets), never quoted.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace

from workers import pysource
from workers.patchcore import part_name
from workers.synthesis.callgraph import CallGraph
from workers.synthesis.documents import (
    DocExample,
    DocstringParts,
    Option,
    call_sites,
    docs_examples,
    docs_paragraphs,
    doctests,
    module_options,
    name_words,
    neighbour_docstrings,
    parse_docstring,
    use_sites,
)
from workers.synthesis.examples import TestSources, calls_name
from workers.synthesis.functions import FunctionInfo, FunctionTable, RaiseInfo
from workers.synthesis.source import SourceTree

_EXAMPLES_PER_FUNCTION = 3
_VISIBLE_TEST_FILES = 40


@dataclass
class FunctionFacts:
    """What the removed body did, told without its code."""

    returns_value: bool = False
    is_generator: bool = False
    self_attributes: list[str] = field(default_factory=list)  # attributes the body assigns
    # attribute -> the parameter it is set from, when the body assigns a parameter as it is
    from_params: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ParamInfo:
    name: str
    annotation: str = ""
    default: str = ""  # source of the default value; "" when required


def param_infos(text: str, info: FunctionInfo) -> list[ParamInfo]:
    try:
        tree = pysource.parse(text)
    except SyntaxError:
        return []
    node = next(
        (
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.lineno == info.def_line
        ),
        None,
    )
    if node is None:
        return []
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = list(zip(positional, defaults, strict=True))
    pairs += list(zip(args.kwonlyargs, args.kw_defaults, strict=True))
    return [
        ParamInfo(
            arg.arg,
            ast.get_source_segment(text, arg.annotation) or "" if arg.annotation else "",
            (ast.get_source_segment(text, default) or "") if default is not None else "",
        )
        for arg, default in pairs
        if arg.arg not in ("self", "cls")
    ]


@dataclass
class FunctionBrief:
    info: FunctionInfo
    part: str
    doc: DocstringParts
    purpose: str
    purpose_source: str  # "docstring", a docs page, "call sites", "its name"
    facts: FunctionFacts
    raises: list[RaiseInfo]
    uses: list[str]  # exactly resolved callees (display names)
    callers: list[str]  # function ids of the callers outside the task
    examples: list[DocExample]
    doc_paragraphs: list[tuple[str, str]]
    neighbours: list[tuple[str, str]]
    options: list[Option]
    params: list[ParamInfo] = field(default_factory=list)


def body_facts(text: str, info: FunctionInfo) -> FunctionFacts:
    try:
        tree = pysource.parse(text)
    except SyntaxError:
        return FunctionFacts()
    node = _find_def(tree, info.def_line)
    if node is None:
        return FunctionFacts()
    facts = FunctionFacts()
    attributes: set[str] = set()
    params = set(info.params)
    for child in _walk_own(node):
        if isinstance(child, ast.Return) and child.value is not None:
            facts.returns_value = True
        elif isinstance(child, ast.Yield | ast.YieldFrom):
            facts.is_generator = True
        elif isinstance(child, ast.Assign | ast.AnnAssign):
            targets = child.targets if isinstance(child, ast.Assign) else [child.target]
            for target in targets:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                ):
                    attributes.add(target.attr)
                    value = child.value
                    if isinstance(value, ast.Name) and value.id in params:
                        facts.from_params.setdefault(target.attr, value.id)
        elif (
            isinstance(child, ast.Attribute)
            and isinstance(child.ctx, ast.Store)
            and isinstance(child.value, ast.Name)
            and child.value.id == "self"
        ):
            attributes.add(child.attr)
    facts.self_attributes = sorted(attributes)
    return facts


def display_name(table: FunctionTable, fid: str) -> str:
    """How to name a function in prose: a constructor by its class."""
    info = table.functions[fid]
    return info.class_name if info.name == "__init__" and info.class_name else info.qualname


def build_briefs(
    *,
    functions: list[FunctionInfo],
    texts: dict[str, str],
    tree: SourceTree,
    table: FunctionTable,
    graph: CallGraph,
    hidden: set[str],
) -> dict[str, FunctionBrief]:
    cluster = {f.id for f in functions}
    hidden_functions = {n.split("[", 1)[0] for n in hidden}
    visible_tests = TestSources({p: tree.files[p] for p in tree.test_paths})
    paths = {f.path for f in functions}
    options_by_path = {path: module_options(path, texts[path]) for path in paths}
    briefs: dict[str, FunctionBrief] = {}
    for info in functions:
        facts = body_facts(texts[info.path], info)
        doc = parse_docstring(info.docstring)
        callers = sorted(
            c
            for c in graph.callers.get(info.id, set())
            if c in table.functions and c not in cluster and not table.functions[c].nested
        )
        exact_callers = [c for c in callers if graph.is_exact(c, info.id)]
        uses = sorted(
            display_name(table, c)
            for c in graph.callees.get(info.id, set())
            if c in table.functions and graph.is_exact(info.id, c)
        )
        paragraphs = docs_paragraphs(tree.docs, _doc_name(info), _qualifiers(info))
        paragraphs = _about_this_class(info, paragraphs)[:3]
        examples = _examples(
            info, tree, table, exact_callers, visible_tests, hidden_functions, texts, functions
        )
        purpose, source = _purpose(info, doc, paragraphs, exact_callers, table)
        related = sorted(
            {*exact_callers, *(c for c in graph.callees.get(info.id, set()) if c not in cluster)}
        )
        briefs[info.id] = FunctionBrief(
            info=info,
            part=part_name(info.path, info.qualname),
            doc=doc,
            purpose=purpose,
            purpose_source=source,
            facts=facts,
            raises=list(info.raises),
            uses=uses,
            callers=callers,
            examples=examples,
            doc_paragraphs=paragraphs,
            neighbours=neighbour_docstrings(info, table, cluster, related),
            params=param_infos(texts[info.path], info),
            options=[
                o
                for o in options_by_path[info.path]
                if o.function in ("", info.qualname)
                or o.function not in {f.qualname for f in functions if f.path == info.path}
            ]
            + _caller_options(exact_callers, table, tree, paths),
        )
    return briefs


def _caller_options(
    callers: list[str], table: FunctionTable, tree: SourceTree, own_paths: set[str]
) -> list[Option]:
    """Command-line options a caller in another module defines (the command line that runs
    the function): a hidden test that passes them depends on them."""
    found: list[Option] = []
    for caller in callers:
        info = table.functions[caller]
        if info.path in own_paths or info.path not in tree.files:
            continue
        found += [
            o
            for o in module_options(info.path, tree.files[info.path])
            if o.function in ("", info.qualname)
        ]
    return found


BEHAVIOUR_KINDS = ("doctest", "docs", "visible test")
# How many resolved calls away a caller may be whose example a function borrows.
_BORROW_DEPTH = 3
# What Python runs a special method for: its purpose when it has no docstring.
_SPECIAL_PURPOSES = {
    "__getitem__": "Looks up `obj[key]` on a `{cls}`.",
    "__setitem__": "Stores `obj[key] = value` on a `{cls}`.",
    "__delitem__": "Deletes `obj[key]` from a `{cls}`.",
    "__contains__": "Answers `x in obj` for a `{cls}`.",
    "__len__": "Gives `len(obj)` of a `{cls}`.",
    "__iter__": "Iterates over a `{cls}` (`for x in obj`).",
    "__next__": "Gives the next item of a `{cls}` iterator.",
    "__eq__": "Decides `a == b` for a `{cls}`.",
    "__ne__": "Decides `a != b` for a `{cls}`.",
    "__lt__": "Decides `a < b` for a `{cls}`.",
    "__hash__": "Gives `hash(obj)` of a `{cls}`, consistent with its equality.",
    "__repr__": "Gives `repr(obj)` of a `{cls}`.",
    "__str__": "Gives `str(obj)` of a `{cls}`.",
    "__call__": "Runs when a `{cls}` is called like a function.",
    "__getattr__": "Gives the attributes of a `{cls}` that normal lookup does not find.",
    "__enter__": "Enters a `with` block on a `{cls}`.",
    "__exit__": "Leaves a `with` block on a `{cls}`.",
    "__bool__": "Decides the truth of a `{cls}`.",
}


def borrow_examples(
    briefs: dict[str, FunctionBrief],
    table: FunctionTable,
    graph: CallGraph,
    docs: dict[str, str] | None = None,
) -> None:
    """A function nothing shows at work shows an example of a caller that runs it (up to three
    resolved calls away): another function of the task, or a public function whose docstring
    or docs page has one. It is marked as going through that caller, and comes before the call
    sites (which show how the function is called, not what it does)."""
    docs = docs or {}
    for fid, brief in briefs.items():
        if any(e.kind in BEHAVIOUR_KINDS for e in brief.examples):
            continue
        borrowed = _sibling_example(brief.info, briefs) or _caller_example(
            fid, briefs, table, graph, docs
        )
        if borrowed is not None:
            brief.examples.insert(0, borrowed)


def _sibling_example(info: FunctionInfo, briefs: dict[str, FunctionBrief]) -> DocExample | None:
    """An example of another function of the task whose code runs this one too (constructs its
    class, calls it, or uses the operator of a special method)."""
    called = _doc_name(info)
    for other in briefs.values():
        if other.info.id == info.id:
            continue
        for example in other.examples:
            if example.kind not in BEHAVIOUR_KINDS or example.via:
                continue
            try:
                tree = pysource.parse(example.code.replace(">>> ", "").replace("... ", ""))
            except SyntaxError:
                continue
            if calls_name(tree, called):
                return example
    return None


def _caller_example(
    fid: str,
    briefs: dict[str, FunctionBrief],
    table: FunctionTable,
    graph: CallGraph,
    docs: dict[str, str],
) -> DocExample | None:
    frontier, seen = [fid], {fid}
    for _depth in range(_BORROW_DEPTH):
        callers = sorted(
            c
            for f in frontier
            for c in graph.callers.get(f, set())
            if c not in seen and graph.is_exact(c, f) and c in table.functions
        )
        seen.update(callers)
        for caller in callers:
            info = table.functions[caller]
            if caller in briefs:
                own = [e for e in briefs[caller].examples if e.kind in BEHAVIOUR_KINDS]
            else:
                own = [DocExample(b, "its docstring", "doctest") for b in doctests(info.docstring)]
                own += docs_examples(docs, _doc_name(info), info.module)
            own = [e for e in own if not e.via]
            if own:
                example = own[0]
                return replace(example, via=display_name(table, caller))
        frontier = callers
    return None


def called_names(info: FunctionInfo, table: FunctionTable) -> list[str]:
    """The names code uses to run a function: its own; for a constructor, its class's and those
    of the project's subclasses that inherit it (`raise BlockError(...)` runs
    `MarkupError.__init__`)."""
    if info.name != "__init__" or not info.class_name:
        return [info.name]
    own = info.class_name.rsplit(".", 1)[-1]
    names = [own]
    with_init = {(f.module, f.class_name) for f in table.functions.values() if f.name == "__init__"}
    frontier = {own}
    for _depth in range(5):
        found = {
            qual.rsplit(".", 1)[-1]
            for (module, qual), bases in sorted(table.class_bases.items())
            if (module, qual) not in with_init
            and any(base.rsplit(".", 1)[-1] in frontier for base in bases)
        } - set(names)
        if not found:
            break
        names += sorted(found)
        frontier = found
    return names


def _about_this_class(
    info: FunctionInfo, paragraphs: list[tuple[str, str]]
) -> list[tuple[str, str]]:
    """The paragraphs that speak of this function. A page that names a method (`popitem`,
    `__setitem__`) without its class speaks of some class's method, often the base class's
    protocol; only one that also names the class speaks of this one."""
    if not info.class_name or info.name == "__init__":
        return paragraphs
    pattern = re.compile(rf"(?<![\w]){re.escape(info.class_name.rsplit('.', 1)[-1])}(?![\w])")
    return [(path, text) for path, text in paragraphs if pattern.search(text)]


def _qualifiers(info: FunctionInfo) -> tuple[str, ...]:
    """What a page writes before the function's name when it means this one: its class
    (`Range.match`), or for a module function its module (`humanize.naturaldelta`)."""
    if info.class_name and info.name != "__init__":
        return (info.class_name.rsplit(".", 1)[-1],)
    parts = info.module.split(".")
    return tuple(dict.fromkeys([parts[0], parts[-1]]))


def _doc_name(info: FunctionInfo) -> str:
    return info.class_name.rsplit(".", 1)[-1] if info.name == "__init__" else info.name


def _purpose(
    info: FunctionInfo,
    doc: DocstringParts,
    paragraphs: list[tuple[str, str]],
    callers: list[str],
    table: FunctionTable,
) -> tuple[str, str]:
    if doc.summary:
        return doc.summary, "its docstring"
    if paragraphs:
        return paragraphs[0][1], paragraphs[0][0]
    if info.name == "__init__" and info.class_name:
        return f"Initialises a new `{info.class_name}`.", "its name"
    if info.name in _SPECIAL_PURPOSES and info.class_name:
        return _SPECIAL_PURPOSES[info.name].format(cls=info.class_name), "Python's data model"
    words = name_words(info.name)
    if callers:
        names = ", ".join(f"`{display_name(table, c)}`" for c in callers[:3])
        verb = "relies" if len(callers) == 1 else "rely"
        text = f"The *{words}* helper that {names} {verb} on"
        first = table.functions[callers[0]]
        if first.docstring:
            summary = " ".join(first.docstring.strip().split("\n\n", 1)[0].split())
            text += f" (`{display_name(table, callers[0])}`: {summary.rstrip('.')})"
        return text + ".", "its call sites"
    return f"What its name says: *{words}*.", "its name"


def _examples(
    info: FunctionInfo,
    tree: SourceTree,
    table: FunctionTable,
    callers: list[str],
    tests: TestSources,
    hidden_functions: set[str],
    texts: dict[str, str],
    removed_functions: list[FunctionInfo],
) -> list[DocExample]:
    name = _doc_name(info) if info.name == "__init__" else info.name
    names = called_names(info, table)
    found: list[DocExample] = [
        DocExample(block, "its docstring", "doctest") for block in doctests(info.docstring)
    ]
    found += docs_examples(tree.docs, name, info.module)
    for called in names:
        found += _visible_test_examples(info, called, tree, tests, hidden_functions)
    for caller in callers:
        caller_info = table.functions[caller]
        found += [
            DocExample(block, f"the docstring of `{caller_info.qualname}`", "doctest")
            for block in doctests(caller_info.docstring)
            if re.search(rf"\b{re.escape(name)}\b", block) or info.name == "__init__"
        ]
    for called in names:
        found += call_sites(info, table, callers, {**tree.files, **texts}, called)
    if not found:
        removed = [range(f.start, f.end + 1) for f in removed_functions if f.path == info.path]
        found += use_sites(info, texts.get(info.path, tree.files.get(info.path, "")), removed)
    unique = list({e.code: e for e in found if e.code.strip()}.values())
    # An example that is part of another (a docs page's block and its shorter excerpt) says
    # nothing the longer one does not.
    unique = [
        e
        for e in unique
        if not any(o is not e and e.code.strip() in o.code and o.via == e.via for o in unique)
    ]
    return unique[:_EXAMPLES_PER_FUNCTION]


def _visible_test_examples(
    info: FunctionInfo,
    name: str,
    tree: SourceTree,
    tests: TestSources,
    hidden_functions: set[str],
) -> list[DocExample]:
    """Asserts of the tests that stay in the repository (visible to the solver)."""
    module_leaf = info.module.rsplit(".", 1)[-1]
    found: list[DocExample] = []
    paths = [p for p in tree.test_paths if f"{name}(" in tree.files[p]][:_VISIBLE_TEST_FILES]
    for path in paths:
        text = tree.files[path]
        if module_leaf not in text and name not in _imported_names(text):
            continue
        for nodeid in _test_ids(path, text):
            if nodeid in hidden_functions:
                continue
            for example in tests.examples_for(nodeid, name):
                found.append(DocExample(example.code, nodeid, "visible test"))
                break
            if len(found) >= 2:
                return found
    return found


def _imported_names(text: str) -> set[str]:
    names: set[str] = set()
    for match in re.finditer(r"^\s*from\s+\S+\s+import\s+\(?([^)\n]*)", text, flags=re.M):
        names |= {part.strip().split(" as ")[0] for part in match.group(1).split(",")}
    return names


def _test_ids(path: str, text: str) -> list[str]:
    try:
        module = pysource.parse(text)
    except (SyntaxError, ValueError):
        return []
    ids: list[str] = []
    for node in module.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            ids.append(f"{path}::{node.name}")
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            ids += [
                f"{path}::{node.name}::{item.name}"
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                and item.name.startswith("test")
            ]
    return ids


def _find_def(tree: ast.AST, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.lineno == line:
            return node
    return None


def _walk_own(node: ast.AST):
    """The function's own nodes: nested defs and lambdas have returns and yields of their own."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        yield child
        if not isinstance(
            child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef
        ):
            stack.extend(ast.iter_child_nodes(child))
