"""Examples of expected behaviour, read from the asserts of the tests that cover a function.

An example is the assert as the test wrote it (source text, never re-printed), preceded by the
assignments in the same test that define the names it uses, so that `acct.deposit(5)` comes
with the line that made `acct`. Tests are the ground truth here: the specs quote them because
docstrings are often missing.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache

from workers import pysource
from workers.synthesis.hidden_tests import split_nodeid

_MAX_EXAMPLE_CHARS = 400
_MAX_SETUP_LINES = 3


@dataclass(frozen=True)
class Example:
    test: str  # node id
    code: str  # one or more lines of Python
    kind: str  # "assert" or "raises"
    exception: str = ""  # for "raises": the exception named by the test
    direct: bool = True  # the function is called in the assert itself, not only before it
    via: str = ""  # when the test reaches the function through a caller: that caller's name
    # Whether resolved calls lead from `via` to the function; when they do not, the test is
    # only known (from coverage) to run both, and the statement must not say "through".
    via_resolved: bool = True


class TestSources:
    """Parsed test files, looked up by pytest node id."""

    __test__ = False  # not a pytest class, despite the name

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    @cache  # noqa: B019 - one instance lives for one synthesis run
    def _tree(self, path: str) -> ast.Module | None:
        try:
            return pysource.parse(self.files[path])
        except (KeyError, SyntaxError, ValueError):
            return None

    def function(self, nodeid: str) -> tuple[str, ast.FunctionDef | ast.AsyncFunctionDef] | None:
        path, names = split_nodeid(nodeid)
        scope: ast.AST | None = self._tree(path)
        for name in names:
            if scope is None:
                return None
            kinds = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
            matches = [
                s for s in getattr(scope, "body", []) if isinstance(s, kinds) and s.name == name
            ]
            scope = matches[-1] if matches else None
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
            return self.files[path], scope
        return None

    def file_calls(self, nodeid: str, name: str) -> bool:
        """Whether the test's file calls `name` anywhere (a test may call the project through
        a helper of its own, such as a fixture or a static method of its class)."""
        tree = self._tree(split_nodeid(nodeid)[0])
        return tree is not None and _calls_name(tree, name)

    def raised_names(self, nodeid: str) -> set[str]:
        """Exceptions the test expects (pytest.raises, assertRaises), by their last name part."""
        found = self.function(nodeid)
        if found is None:
            return set()
        names = set()
        for node in ast.walk(found[1]):
            for exception in _expected_exception(node).split("|"):
                if exception:
                    names.add(exception.rsplit(".", 1)[-1])
        return names

    def attributes_read(self, nodeid: str) -> set[str]:
        """Attribute names the test reads (`obj.balance`), to tie it to state specs."""
        found = self.function(nodeid)
        if found is None:
            return set()
        return {
            n.attr
            for n in ast.walk(found[1])
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load)
        }

    def keywords_passed(self, nodeid: str, function_name: str) -> set[str]:
        """Keyword arguments the test passes in its calls of `function_name`."""
        found = self.function(nodeid)
        if found is None:
            return set()
        return {
            k.arg
            for n in ast.walk(found[1])
            if isinstance(n, ast.Call) and _call_name(n) == function_name
            for k in n.keywords
            if k.arg
        }

    def strings(self, nodeid: str) -> set[str]:
        """String constants of the test and of its decorators (parametrised values)."""
        found = self.function(nodeid)
        if found is None:
            return set()
        return {
            n.value
            for n in ast.walk(found[1])
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        }

    def examples_for(self, nodeid: str, function_name: str | None) -> list[Example]:
        """The asserts (and `pytest.raises` blocks) of a test that involve `function_name`;
        with None, every one of them: what a test checks through a public entry point."""
        found = self.function(nodeid)
        if found is None:
            return []
        text, test = found
        examples: list[Example] = []
        parametrize = _parametrize_note(text, test)

        def calls(node: ast.AST) -> bool:
            return function_name is None or _calls_name(node, function_name)

        def uses(stmt: ast.stmt) -> bool:
            return function_name is not None and _uses_result_of(test, stmt, function_name)

        for stmt in _statements(test.body):
            unittest = _unittest_assert(stmt)
            if unittest == "raises":
                call = stmt.value
                target = _dotted(call.args[1]).rsplit(".", 1)[-1] if call.args[1:] else ""
                if target and (function_name is None or target == function_name):
                    code = _with_setup(text, test, stmt, _segment(text, stmt))
                    note = _note(code, parametrize, stmt)
                    examples.append(Example(nodeid, note, "raises", _dotted(call.args[0])))
            elif unittest or isinstance(stmt, ast.Assert):
                checked = stmt.test if isinstance(stmt, ast.Assert) else stmt
                direct = function_name is not None and calls(checked)
                if calls(checked) or uses(stmt):
                    code = _with_setup(text, test, stmt, _segment(text, stmt))
                    note = _note(code, parametrize, stmt)
                    examples.append(Example(nodeid, note, "assert", direct=direct))
            elif isinstance(stmt, ast.With | ast.AsyncWith):
                exception = next(
                    (e for item in stmt.items if (e := _expected_exception(item.context_expr))),
                    "",
                )
                if exception and any(calls(s) for s in stmt.body):
                    code = _with_setup(text, test, stmt, _segment(text, stmt))
                    note = _note(code, parametrize, stmt)
                    examples.append(Example(nodeid, note, "raises", exception))
        return [e for e in examples if len(e.code) <= _MAX_EXAMPLE_CHARS]


def _statements(body: list[ast.stmt]):
    """Statements of a test body, looking into if/for/with/try blocks but not nested defs."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.With | ast.AsyncWith):
            continue  # a `with pytest.raises` block is an example as a whole
        for field_name in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field_name, None)
            if isinstance(inner, list) and not isinstance(stmt, ast.FunctionDef | ast.ClassDef):
                yield from _statements(inner)
        for handler in getattr(stmt, "handlers", []):
            yield from _statements(handler.body)


def _segment(text: str, node: ast.AST) -> str:
    """Source of a statement, its continuation lines dedented by the statement's indentation."""
    source = ast.get_source_segment(text, node, padded=False) or ""
    lines = source.splitlines()
    indent = getattr(node, "col_offset", 0)
    dedented = [lines[0]] if lines else []
    for line in lines[1:]:
        margin = len(line) - len(line.lstrip(" \t"))
        dedented.append(line[min(indent, margin) :])
    return "\n".join(dedented)


# Special methods run by an operator or a built-in rather than by their name.
_COMPARE = {
    "__eq__": ast.Eq,
    "__ne__": ast.NotEq,
    "__lt__": ast.Lt,
    "__le__": ast.LtE,
    "__gt__": ast.Gt,
    "__ge__": ast.GtE,
    "__contains__": (ast.In, ast.NotIn),
}
_BINARY = {
    "__add__": ast.Add,
    "__sub__": ast.Sub,
    "__mul__": ast.Mult,
    "__truediv__": ast.Div,
    "__floordiv__": ast.FloorDiv,
    "__mod__": ast.Mod,
    "__and__": ast.BitAnd,
    "__or__": ast.BitOr,
    "__matmul__": ast.MatMult,
}
_BUILTINS = {
    "__hash__": "hash",
    "__len__": "len",
    "__str__": "str",
    "__repr__": "repr",
    "__bool__": "bool",
    "__iter__": "list",
    "__abs__": "abs",
    "__int__": "int",
    "__float__": "float",
}


def _runs_special(node: ast.AST, name: str) -> bool:
    if name in _COMPARE:
        return isinstance(node, ast.Compare) and any(
            isinstance(op, _COMPARE[name]) for op in node.ops
        )
    if name in _BINARY:
        return isinstance(node, ast.BinOp | ast.AugAssign) and isinstance(node.op, _BINARY[name])
    if name in _BUILTINS:
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == _BUILTINS[name]
        )
    if name in ("__getitem__", "__setitem__", "__delitem__"):
        return isinstance(node, ast.Subscript)
    return False


def calls_name(node: ast.AST, name: str) -> bool:
    """Whether the code calls `name` (or runs it: a special method by its operator)."""
    return _calls_name(node, name)


def _calls_name(node: ast.AST, name: str) -> bool:
    for child in ast.walk(node):
        if name.startswith("__") and _runs_special(child, name):
            return True
        if isinstance(child, ast.Call):
            func = child.func
            if (isinstance(func, ast.Name) and func.id == name) or (
                isinstance(func, ast.Attribute) and func.attr == name
            ):
                return True
        # Properties and dunders are reached without a call of their own name.
        if isinstance(child, ast.Attribute) and child.attr == name and not name.startswith("_"):
            return True
    return False


def _unittest_assert(stmt: ast.stmt) -> str:
    """ "assert" for `self.assertEqual(...)` and kin, "raises" for the call form of
    `self.assertRaises(E, f, ...)`, "" for anything else."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return ""
    func = stmt.value.func
    if not (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == "self"
        and func.attr.startswith("assert")
    ):
        return ""
    if func.attr in ("assertRaises", "assertRaisesRegex"):
        return "raises" if len(stmt.value.args) >= 2 else ""
    return "assert"


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def _assigned_names(stmt: ast.stmt) -> set[str]:
    targets: list[ast.AST] = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, ast.AnnAssign | ast.AugAssign):
        targets = [stmt.target]
    elif isinstance(stmt, ast.With | ast.AsyncWith):
        targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _used_names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _uses_result_of(test: ast.AST, stmt: ast.stmt, name: str) -> bool:
    """`result = f(...)` earlier in the test, then `assert result == ...`."""
    used = _used_names(stmt.test if isinstance(stmt, ast.Assert) else stmt)
    for earlier in _statements(test.body):
        if earlier is stmt:
            return False
        if (
            isinstance(earlier, ast.Assign)
            and _assigned_names(earlier) & used
            and _calls_name(earlier.value, name)
        ):
            return True
    return False


def _with_setup(text: str, test: ast.AST, stmt: ast.stmt, code: str) -> str:
    """Prefix the top-level assignments of the test that define names the example uses."""
    needed = _used_names(stmt)
    setup: list[ast.stmt] = []
    for earlier in reversed([s for s in test.body if s.lineno < stmt.lineno]):
        if len(setup) >= _MAX_SETUP_LINES:
            break
        defined = _assigned_names(earlier)
        if isinstance(earlier, ast.Assign | ast.AnnAssign | ast.Expr) and (
            defined & needed or (isinstance(earlier, ast.Expr) and _used_names(earlier) & needed)
        ):
            setup.insert(0, earlier)
            needed = (needed - defined) | _used_names(earlier)
    lines = [_segment(text, s) for s in setup] + [code]
    return "\n".join(lines)


def _expected_exception(node: ast.AST) -> str:
    if not isinstance(node, ast.Call) or not node.args:
        return ""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name not in ("raises", "assertRaises", "assertRaisesRegex"):
        return ""
    first = node.args[0]
    if isinstance(first, ast.Tuple):
        return "|".join(_dotted(e) for e in first.elts)
    return _dotted(first)


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _parametrize_note(text: str, test: ast.AST) -> dict[str, str]:
    """Argument names -> the values list of @pytest.mark.parametrize, as written."""
    notes: dict[str, str] = {}
    for decorator in getattr(test, "decorator_list", []):
        if not (
            isinstance(decorator, ast.Call) and _dotted(decorator.func).endswith("parametrize")
        ):
            continue
        if len(decorator.args) < 2:
            continue
        names_node, values_node = decorator.args[0], decorator.args[1]
        if isinstance(names_node, ast.Constant) and isinstance(names_node.value, str):
            names = names_node.value
        else:
            names = _segment(text, names_node)
        values = " ".join(_segment(text, values_node).split())
        for name in names.replace(" ", "").strip("()[]").split(","):
            if name:
                notes[name.strip("'\"")] = f"{names.strip()} in {values}"
    return notes


def _note(code: str, parametrize: dict[str, str], stmt: ast.AST) -> str:
    used = _used_names(stmt)
    notes = sorted({parametrize[name] for name in used if name in parametrize})
    if not notes:
        return code
    shown = "; ".join(notes)
    if len(shown) > 200:
        shown = shown[:197] + "..."
    return f"{code}\n# parametrised: {shown}"
