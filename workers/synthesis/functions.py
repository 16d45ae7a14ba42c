"""The function table: every function and method of the project's source files, read with `ast`.

Line numbers are 1-based and inclusive. A function's *body range* starts after its docstring
(or after the signature when it has none) and is what stubbing replaces, so it is also the range
whose coverage says that a test really ran the function (def and decorator lines run at import).
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass, field

from workers import pysource
from workers.synthesis.source import SourceTree, is_test_path

# Decorators that mark a body as a declaration rather than an implementation.
_DECLARATION_DECORATORS = {"overload", "abstractmethod", "abstractproperty"}


@dataclass(frozen=True)
class RaiseInfo:
    exception: str  # "ValueError", "errors.LedgerError"
    message: str  # literal text, f-string template, or "" when not a literal
    line: int
    condition: str = ""  # source of the enclosing `if` test, when there is one
    condition_names: tuple[str, ...] = ()  # plain names the condition reads


@dataclass(frozen=True)
class CallRef:
    """A call as written in a body: `name()`, `self.name()`, `mod.name()` or `x.name()`."""

    name: str
    receiver: str = ""  # "" for a bare name, "self"/"cls", an imported alias, or "?" for others
    # The receiver's type when the body says it (an annotated parameter, `x = Cls(...)`, a
    # literal): "Cls" as written, or "builtins.list" and the like for built-in types.
    receiver_type: str = ""


@dataclass
class FunctionInfo:
    path: str
    module: str
    qualname: str  # "Account.deposit", "slugify"
    class_name: str  # enclosing class qualname, "" for module functions
    is_async: bool
    nested: bool  # defined inside another function
    start: int  # first decorator line, or the def line
    def_line: int
    signature_end: int  # line that holds the signature's closing colon
    docstring_end: int  # last line of the docstring, 0 when there is none
    end: int
    signature: str  # "def deposit(self, amount: int) -> None"
    docstring: str
    decorators: list[str]
    statements: int  # statements in the body, nested ones counted, docstring excluded
    single_line: bool  # body sits on the def line (or on the docstring's last line)
    declaration: bool  # @overload/@abstractmethod, or a body that only raises NotImplementedError
    raises: list[RaiseInfo] = field(default_factory=list)
    calls: list[CallRef] = field(default_factory=list)
    params: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.path}::{self.qualname}"

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]

    @property
    def dotted(self) -> str:
        return f"{self.module}.{self.qualname}"

    @property
    def body_start(self) -> int:
        """First line that stubbing replaces."""
        return (self.docstring_end or self.signature_end) + 1

    @property
    def body_lines(self) -> range:
        return range(self.body_start, self.end + 1)


@dataclass
class ModuleInfo:
    path: str
    name: str
    # local name -> dotted target ("pkg.mod" for modules, "pkg.mod.func" for imported names)
    imports: dict[str, str] = field(default_factory=dict)


@dataclass
class FunctionTable:
    functions: dict[str, FunctionInfo]  # by id
    modules: dict[str, ModuleInfo]  # by path
    # Class qualname within a module -> names of its bases as written ("Base", "mod.Base").
    class_bases: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    # (module, class qualname) -> attribute -> its type as `self.attr = ...` or an annotation
    # in the class body says (same form as CallRef.receiver_type).
    attribute_types: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)

    def in_file(self, path: str) -> list[FunctionInfo]:
        return sorted((f for f in self.functions.values() if f.path == path), key=lambda f: f.start)


def build_function_table(tree: SourceTree, *, include_tests: bool = False) -> FunctionTable:
    functions: dict[str, FunctionInfo] = {}
    modules: dict[str, ModuleInfo] = {}
    class_bases: dict[tuple[str, str], list[str]] = {}
    attribute_types: dict[tuple[str, str], dict[str, str]] = {}
    for path in sorted(tree.files):
        if is_test_path(path) and not include_tests:
            continue
        text = tree.files[path]
        try:
            module_ast = pysource.parse(text, filename=path)
        except (SyntaxError, ValueError):
            continue  # a file we cannot parse is a file we will not edit
        module = ModuleInfo(path=path, name=tree.module_name(path))
        _collect_imports(module_ast, module, is_package=path.endswith("__init__.py"))
        modules[path] = module
        visitor = _FunctionCollector(path, module.name, text, class_bases, attribute_types)
        visitor.visit(module_ast)
        for info in visitor.found:
            functions[info.id] = info
    return FunctionTable(
        functions=functions,
        modules=modules,
        class_bases=class_bases,
        attribute_types=attribute_types,
    )


def _collect_imports(module_ast: ast.Module, module: ModuleInfo, *, is_package: bool) -> None:
    package = module.name if is_package else module.name.rpartition(".")[0]
    for node in ast.walk(module_ast):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    module.imports[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    module.imports[top] = top
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".") if package else []
                keep = len(parts) - (node.level - 1)
                anchor = ".".join(parts[: max(keep, 0)])
                base = ".".join(p for p in (anchor, base) if p)
            for alias in node.names:
                if alias.name == "*":
                    continue
                local = alias.asname or alias.name
                module.imports[local] = f"{base}.{alias.name}" if base else alias.name


class _FunctionCollector(ast.NodeVisitor):
    def __init__(self, path: str, module: str, text: str, class_bases, attribute_types) -> None:
        self.path = path
        self.module = module
        self.text = text
        self.lines = text.splitlines()
        self.class_bases = class_bases
        self.attribute_types = attribute_types
        self.scope: list[tuple[str, str]] = []  # ("class" | "function", name)
        self.found: list[FunctionInfo] = []

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        qual = ".".join([name for _, name in self.scope] + [node.name])
        self.class_bases[(self.module, qual)] = [_dotted(b) for b in node.bases if _dotted(b)]
        types = self.attribute_types.setdefault((self.module, qual), {})
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                kind = annotation_type(stmt.annotation)
                if kind:
                    types.setdefault(stmt.target.id, kind)
        self.scope.append(("class", node.name))
        self.generic_visit(node)
        self.scope.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.found.append(self._describe(node))
        self.scope.append(("function", node.name))
        self.generic_visit(node)
        self.scope.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def _describe(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> FunctionInfo:
        names = [name for _, name in self.scope]
        qualname = ".".join([*names, node.name])
        nested = any(kind == "function" for kind, _ in self.scope)
        class_name = ".".join(names) if self.scope and self.scope[-1][0] == "class" else ""
        start = min([d.lineno for d in node.decorator_list] + [node.lineno])
        first = node.body[0]
        doc_node = _docstring_node(node)
        signature_end = self._signature_end(node, first)
        docstring_end = doc_node.end_lineno if doc_node is not None else 0
        rest = node.body[1:] if doc_node is not None else node.body
        single_line = first.lineno == signature_end or bool(
            rest and doc_node is not None and rest[0].lineno == doc_node.end_lineno
        )
        decorators = [ast.get_source_segment(self.text, d) or "" for d in node.decorator_list]
        info = FunctionInfo(
            path=self.path,
            module=self.module,
            qualname=qualname,
            class_name=class_name,
            is_async=isinstance(node, ast.AsyncFunctionDef),
            nested=nested,
            start=start,
            def_line=node.lineno,
            signature_end=signature_end,
            docstring_end=docstring_end,
            end=node.end_lineno or node.lineno,
            signature=self._signature_text(node, signature_end),
            docstring=ast.get_docstring(node) or "",
            decorators=decorators,
            statements=sum(_count_statements(stmt) for stmt in rest),
            single_line=single_line,
            declaration=_is_declaration(node, rest),
            raises=_raises(rest, self.text),
            calls=_calls(rest, local_types(node, rest)),
            params=_params(node),
        )
        if class_name:
            self._note_attribute_types(node, rest, class_name)
        return info

    def _note_attribute_types(self, node, rest: list[ast.stmt], class_name: str) -> None:
        types = self.attribute_types.setdefault((self.module, class_name), {})
        known = local_types(node, rest)
        for stmt in _own_nodes(rest):
            if not isinstance(stmt, ast.Assign | ast.AnnAssign):
                continue
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                ):
                    kind = (
                        annotation_type(stmt.annotation) if isinstance(stmt, ast.AnnAssign) else ""
                    ) or value_type(stmt.value, known)
                    if kind:
                        types.setdefault(target.attr, kind)

    def _signature_end(self, node: ast.AST, first: ast.stmt) -> int:
        """The line of the signature's colon: walk back from the first statement over comments."""
        line = first.lineno - 1
        while line > node.lineno and self._is_blank_or_comment(line):
            line -= 1
        # A body on the def line itself (`def f(): return 1`) leaves the colon on that line.
        return max(line, node.lineno) if first.lineno > node.lineno else first.lineno

    def _is_blank_or_comment(self, line: int) -> bool:
        stripped = self.lines[line - 1].strip() if line - 1 < len(self.lines) else ""
        return not stripped or stripped.startswith("#")

    def _signature_text(self, node: ast.AST, signature_end: int) -> str:
        """`def name(args) -> ret` as written, without comments and with whitespace folded."""
        lines = self.lines[node.lineno - 1 : signature_end]
        depth = 0
        cut: tuple[int, int] | None = None
        try:
            source = "\n".join(lines) + "\n"
            for token in tokenize.generate_tokens(io.StringIO(source).readline):
                row, col = token.start
                if token.type == tokenize.COMMENT:
                    line = lines[row - 1]
                    lines[row - 1] = line[:col] + " " * (len(line) - col)
                elif token.type == tokenize.OP and token.string in "([{":
                    depth += 1
                elif token.type == tokenize.OP and token.string in ")]}":
                    depth -= 1
                elif token.type == tokenize.OP and token.string == ":" and depth == 0:
                    cut = (row, col)
                    break
        except (tokenize.TokenError, IndentationError):
            pass
        if cut is not None:
            lines = lines[: cut[0]]
            lines[-1] = lines[-1][: cut[1]]
        text = " ".join(" ".join(lines).split())
        return text.replace("( ", "(").replace(" )", ")").replace(",)", ")")


def _docstring_node(node: ast.AST) -> ast.Expr | None:
    body = getattr(node, "body", [])
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        return body[0]
    return None


def _count_statements(stmt: ast.stmt) -> int:
    return sum(1 for node in ast.walk(stmt) if isinstance(node, ast.stmt))


def _is_declaration(node: ast.FunctionDef | ast.AsyncFunctionDef, rest: list[ast.stmt]) -> bool:
    for decorator in node.decorator_list:
        name = _dotted(decorator.func if isinstance(decorator, ast.Call) else decorator)
        if name.rsplit(".", 1)[-1] in _DECLARATION_DECORATORS:
            return True
    if not rest:
        return True
    only = rest[0] if len(rest) == 1 else None
    if isinstance(only, ast.Pass) or (
        isinstance(only, ast.Expr) and isinstance(only.value, ast.Constant)
    ):
        return True
    if isinstance(only, ast.Raise) and only.exc is not None:
        target = only.exc.func if isinstance(only.exc, ast.Call) else only.exc
        return _dotted(target) == "NotImplementedError"
    return False


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else ""
    return ""


def _params(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = node.args
    names = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return names


def _own_nodes(stmts: list[ast.stmt]):
    """Every node of a body, nested functions included: stubbing removes them with it."""
    for stmt in stmts:
        yield from ast.walk(stmt)


def _raises(stmts: list[ast.stmt], text: str) -> list[RaiseInfo]:
    parents: dict[ast.AST, ast.AST] = {}
    for node in _own_nodes(stmts):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    found: list[RaiseInfo] = []
    seen: set[tuple[str, str]] = set()
    for node in _own_nodes(stmts):
        if not isinstance(node, ast.Raise) or node.exc is None:
            continue  # a bare re-raise has no contract of its own
        exc = node.exc
        target = exc.func if isinstance(exc, ast.Call) else exc
        exception = _dotted(target)
        if not exception or exception == "NotImplementedError":
            continue
        message = ""
        if isinstance(exc, ast.Call) and exc.args:
            message = _message_text(exc.args[0], text)
        key = (exception, message)
        if key in seen:
            continue
        seen.add(key)
        condition, names = _guard(node, parents, text)
        found.append(RaiseInfo(exception, message, node.lineno, condition, names))
    return found


def _message_text(node: ast.AST, text: str) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        pieces = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                pieces.append(str(value.value))
            else:
                inner = ast.get_source_segment(text, value.value) or "..."
                conversion = f"!{chr(value.conversion)}" if value.conversion > 0 else ""
                pieces.append("{" + inner + conversion + "}")
        return "".join(pieces)
    return ""


def _guard(node: ast.AST, parents: dict, text: str) -> tuple[str, tuple[str, ...]]:
    """The test of the nearest `if` whose body (not else branch) holds the raise."""
    child, parent = node, parents.get(node)
    while parent is not None:
        if isinstance(parent, ast.If) and child in parent.body:
            source = ast.get_source_segment(text, parent.test) or ""
            names = sorted({n.id for n in ast.walk(parent.test) if isinstance(n, ast.Name)})
            return " ".join(source.split()), tuple(names)
        child, parent = parent, parents.get(parent)
    return "", ()


_BUILTIN_TYPES = {
    "list": "builtins.list",
    "dict": "builtins.dict",
    "set": "builtins.set",
    "frozenset": "builtins.frozenset",
    "tuple": "builtins.tuple",
    "str": "builtins.str",
    "bytes": "builtins.bytes",
    "int": "builtins.int",
    "float": "builtins.float",
    "bool": "builtins.bool",
    "sorted": "builtins.list",
    "reversed": "builtins.list",
    "bytearray": "builtins.bytearray",
}
_LITERAL_TYPES = (
    (ast.List, "builtins.list"),
    (ast.ListComp, "builtins.list"),
    (ast.Dict, "builtins.dict"),
    (ast.DictComp, "builtins.dict"),
    (ast.Set, "builtins.set"),
    (ast.SetComp, "builtins.set"),
    (ast.Tuple, "builtins.tuple"),
    (ast.JoinedStr, "builtins.str"),
)


def annotation_type(node: ast.AST | None) -> str:
    """The class an annotation names: `Money`, `mod.Money`, `Optional[Money]`, `"Money"`,
    `Money | None`; built-in containers as "builtins.list" and the like."""
    if node is None:
        return ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return annotation_type(pysource.parse(node.value, mode="eval").body)
        except SyntaxError:
            return ""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        sides = [annotation_type(node.left), annotation_type(node.right)]
        named = [side for side in sides if side and side != "None"]
        return named[0] if len(named) == 1 else ""
    if isinstance(node, ast.Subscript):
        outer = _dotted(node.value).rsplit(".", 1)[-1]
        if outer == "Optional":
            return annotation_type(node.slice)
        return _BUILTIN_TYPES.get(outer.lower(), "") if outer else ""
    name = _dotted(node)
    if name == "None":
        return "None"
    return _BUILTIN_TYPES.get(name, name)


def value_type(node: ast.AST | None, known: dict[str, str]) -> str:
    """The type of an assigned value when it shows: a literal, `Cls(...)`, a typed name."""
    for kind, name in _LITERAL_TYPES:
        if isinstance(node, kind):
            return name
    if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes | int | float):
        return f"builtins.{type(node.value).__name__}"
    if isinstance(node, ast.Call):
        name = _dotted(node.func)
        return _BUILTIN_TYPES.get(name, name if name[:1].isupper() or "." in name else "")
    if isinstance(node, ast.Name):
        return known.get(node.id, "")
    return ""


def local_types(node: ast.FunctionDef | ast.AsyncFunctionDef, rest: list[ast.stmt]) -> dict:
    """Local name -> type, from annotated parameters and single assignments in the body."""
    args = node.args
    types: dict[str, str] = {}
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
        kind = annotation_type(arg.annotation)
        if kind and kind != "None":
            types[arg.arg] = kind
    assigned: dict[str, set[str]] = {}
    for stmt in _own_nodes(rest):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name):
                assigned.setdefault(target.id, set()).add(value_type(stmt.value, types))
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            assigned.setdefault(stmt.target.id, set()).add(annotation_type(stmt.annotation))
    for name, kinds in assigned.items():
        if name not in types and len(kinds) == 1 and "" not in kinds:
            types[name] = next(iter(kinds))
    return types


def _calls(stmts: list[ast.stmt], types: dict[str, str] | None = None) -> list[CallRef]:
    types = types or {}
    refs: set[CallRef] = set()
    for node in _own_nodes(stmts):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name):
            refs.add(CallRef(func.id))
        elif isinstance(func, ast.Attribute):
            receiver = _dotted(func.value)
            kind = types.get(receiver, "") if receiver else value_type(func.value, types)
            if isinstance(func.value, ast.Call) and _dotted(func.value.func) == "super":
                receiver, kind = "super", ""
            refs.add(CallRef(func.attr, receiver or "?", kind))
    return sorted(refs, key=lambda r: (r.receiver, r.name, r.receiver_type))
