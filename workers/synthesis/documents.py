"""What the repository itself says about a function, outside the hidden tests.

A statement a solver can work from names, for every function to implement, its purpose, its
parameters, what it returns and raises, and shows at least one concrete example. Tests that
check the work are hidden, so everything here comes from other sources: the function's own
docstring (kept in the code, doctests included), the repository's README and docs pages, the
tests that stay visible, the call sites in the project's code, the docstrings next to it, and
the command-line options its module defines. Nothing here reads a removed body.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from workers import pysource
from workers.synthesis.functions import FunctionInfo, FunctionTable

_MAX_SNIPPET_LINES = 10
_MAX_PARAGRAPH_CHARS = 500
_MAX_CALL_SITE_CHARS = 600
_DIRECTIVE = re.compile(r"^\s*\.\. (code-block|code|sourcecode|testcode|doctest|ipython)::")
_MAX_OPTIONS = 20
_SECTION = re.compile(
    r"^\s*(Args|Arguments|Parameters|Params|Keyword Arguments|Returns?|Yields?|Raises)\s*:?\s*$"
)
_SPHINX = re.compile(r"^\s*:(param|type|returns?|rtype|raises?)\s*([^:]*):\s*(.*)$")
_GOOGLE_ITEM = re.compile(r"^\s*\*{0,2}(\w+)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")
_NUMPY_ITEM = re.compile(r"^\s*(\w+)\s*:\s*(.*)$")


@dataclass(frozen=True)
class DocExample:
    """A concrete example of behaviour from a source other than the hidden tests."""

    code: str
    source: str  # "its docstring", "README.md", "tests/test_x.py::test_y", "call site in `f`"
    kind: str  # "doctest", "docs", "visible test", "call site"
    # The caller the example runs the function through, when it does not call it by name.
    via: str = ""
    # False: coverage saw the example's test run the function, but no resolved call leads
    # from `via` to it (a constructor run by a test's setup, a dispatch the graph cannot see).
    via_resolved: bool = True


@dataclass
class DocstringParts:
    summary: str = ""
    params: dict[str, str] = field(default_factory=dict)
    returns: str = ""
    raises: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Option:
    flags: tuple[str, ...]
    help: str = ""
    default: str = ""
    choices: str = ""
    path: str = ""
    function: str = ""  # the function (qualified name) whose body defines it, "" at module level

    def describe(self) -> str:
        text = ", ".join(f"`{flag}`" for flag in self.flags)
        extras = [self.help] if self.help else []
        if self.choices:
            extras.append(f"choices {self.choices}")
        if self.default:
            extras.append(f"default {self.default}")
        return text + (f": {'; '.join(extras)}" if extras else "")


def parse_docstring(docstring: str) -> DocstringParts:
    """Summary, parameters, return and raises of Google, NumPy and Sphinx style docstrings."""
    parts = DocstringParts()
    text = docstring.strip()
    if not text:
        return parts
    parts.summary = " ".join(text.split("\n\n", 1)[0].split())
    section = ""
    current = ""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        sphinx = _SPHINX.match(line)
        if sphinx:
            role, name, value = sphinx.group(1), sphinx.group(2).strip(), sphinx.group(3).strip()
            if role == "param" and name:
                current = name.split()[-1]
                parts.params[current] = value
                section = "sphinx-param"
            elif role.startswith("return"):
                parts.returns = value
                section = "sphinx-returns"
            elif role.startswith("raise"):
                parts.raises.append(f"{name}: {value}".strip(": "))
                section = ""
            continue
        heading = _SECTION.match(line)
        underline = index + 1 < len(lines) and set(lines[index + 1].strip()) == {"-"}
        if heading:
            section = heading.group(1).lower()
            current = ""
            continue
        if set(line.strip()) == {"-"}:
            continue
        if not line.strip():
            if section in ("sphinx-param", "sphinx-returns"):
                section = ""
            continue
        if underline:
            section = line.strip().lower()
            current = ""
            continue
        if section.startswith(("arg", "param", "keyword")):
            item = _GOOGLE_ITEM.match(line) or _NUMPY_ITEM.match(line)
            indent = len(line) - len(line.lstrip())
            if item and (indent <= 8 and (not current or item.group(1) != current)):
                current = item.group(1)
                parts.params[current] = item.groups()[-1].strip()
            elif current:
                parts.params[current] = f"{parts.params[current]} {line.strip()}".strip()
        elif section.startswith(("return", "yield")):
            parts.returns = f"{parts.returns} {line.strip()}".strip()
        elif section == "raises":
            parts.raises.append(line.strip())
        elif section == "sphinx-param" and current:
            parts.params[current] = f"{parts.params[current]} {line.strip()}"
        elif section == "sphinx-returns":
            parts.returns = f"{parts.returns} {line.strip()}"
    parts.params = {k: " ".join(v.split()) for k, v in parts.params.items()}
    parts.returns = " ".join(parts.returns.split())
    return parts


def doctests(text: str) -> list[str]:
    """Doctest blocks (`>>>` lines with their output) of a docstring or a docs page."""
    blocks: list[list[str]] = []
    current: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(">>>") or (current and stripped.startswith("...")):
            current.append(stripped)
        elif current and stripped:
            current.append(stripped)  # the expected output
        elif current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    return ["\n".join(block[:_MAX_SNIPPET_LINES]) for block in blocks]


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(name)}\s*\(", text) is not None


def docs_examples(docs: dict[str, str], name: str, module: str) -> list[DocExample]:
    """Code blocks of the README and docs pages that call `name`."""
    found: list[DocExample] = []
    for path in sorted(docs, key=_doc_rank):
        text = docs[path]
        if name not in text:
            continue
        for block in _code_blocks(text):
            if _mentions(block, name) and (not name.startswith("_") or module in block):
                found.append(DocExample(_trim(block, name), path, "docs"))
    return found


def docs_paragraphs(
    docs: dict[str, str], name: str, qualifiers: tuple[str, ...] = ()
) -> list[tuple[str, str]]:
    """(path, paragraph) of the README and docs pages' prose that names `name` (see `_mention`;
    `qualifiers`: its class, or its module's names)."""
    found: list[tuple[str, str]] = []
    pattern = _mention(name, qualifiers)
    for path in sorted(docs, key=_doc_rank):
        text = docs[path]
        if name not in text:
            continue
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        for paragraph in re.split(r"\n\s*\n", prose):
            flat = " ".join(paragraph.split())
            if not pattern.search(flat) or flat.startswith((">>>", "```", "..", "    ")):
                continue
            if paragraph.startswith(("    ", "\t")) or flat.count("(") > 6:
                continue  # an indented literal block or code, not prose
            if len(flat) > _MAX_PARAGRAPH_CHARS:
                flat = flat[: _MAX_PARAGRAPH_CHARS - 3] + "..."
            found.append((path, flat))
    return found


def _mention(name: str, qualifiers: tuple[str, ...] = ()) -> re.Pattern[str]:
    """What names `name` in prose. A name that is also an English word (`match`, `process`)
    counts only where it reads as code: in backticks or a role (:meth:`match`), called
    (`match(`), or qualified by its own class or module (`Range.match`); "might not match the
    scheme" is not about `match`, nor is `Version.match` about `Range.match`. A name no prose
    would use (`_wrap`, `RRCache`, `parse2`) also counts as a plain word."""
    escaped = re.escape(name)
    forms = [rf"(?<=`){escaped}(?![\w.])", rf"(?<![\w.]){escaped}(?=\()"]
    if qualifiers:
        owners = "|".join(re.escape(q) for q in qualifiers)
        forms.append(rf"(?<![\w.])(?:{owners})\.{escaped}(?![\w])")
    if re.search(r"[_A-Z0-9]", name):
        forms.append(rf"(?<![\w.]){escaped}(?![\w])")
    return re.compile("|".join(forms))


def _doc_rank(path: str) -> tuple[int, str]:
    return (0 if path.lower().startswith("readme") else 1, path)


def _code_blocks(text: str) -> list[str]:
    blocks: list[str] = []
    fenced = re.findall(r"```[\w+-]*\n(.*?)```", text, flags=re.S)
    blocks += fenced
    # reStructuredText: a literal block (a line ending in "::") or a directive (`.. code-block::`,
    # `.. testcode::`, `.. doctest::`), then a block indented deeper than that line.
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.rstrip().endswith("::") or _DIRECTIVE.match(line):
            base = len(line) - len(line.lstrip())
            index += 1
            while index < len(lines) and (
                not lines[index].strip() or lines[index].strip().startswith(":")
            ):
                index += 1  # blank lines and the directive's options
            block = []
            while index < len(lines) and (
                not lines[index].strip() or len(lines[index]) - len(lines[index].lstrip()) > base
            ):
                block.append(lines[index])
                index += 1
            if block:
                blocks.append(_dedent("\n".join(block)).strip("\n"))
            continue
        index += 1
    blocks += doctests(text)
    return [b for b in dict.fromkeys(blocks) if b.strip()]


def _dedent(text: str) -> str:
    lines = text.splitlines()
    margin = min((len(ln) - len(ln.lstrip()) for ln in lines if ln.strip()), default=0)
    return "\n".join(ln[margin:] for ln in lines)


def _trim(block: str, name: str) -> str:
    """At most a few lines of a block, around the first that calls `name`."""
    lines = block.strip("\n").splitlines()
    if len(lines) <= _MAX_SNIPPET_LINES:
        return "\n".join(lines)
    at = next((i for i, line in enumerate(lines) if _mentions(line, name)), 0)
    start = max(0, at - 3)
    return "\n".join(lines[start : start + _MAX_SNIPPET_LINES])


def call_sites(
    info: FunctionInfo,
    table: FunctionTable,
    callers: list[str],
    texts: dict[str, str],
    called: str = "",
) -> list[DocExample]:
    """The statements of the callers (outside the task) that call `info` (by the name `called`:
    a constructor by its class's), as they are written."""
    called = called or info.name
    found: list[DocExample] = []
    for caller_id in callers:
        caller = table.functions.get(caller_id)
        if caller is None or caller.path not in texts:
            continue
        text = texts[caller.path]
        try:
            tree = pysource.parse(text)
        except (SyntaxError, ValueError):
            continue
        node = next(
            (
                n
                for n in ast.walk(tree)
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                and n.lineno == caller.def_line
            ),
            None,
        )
        if node is None:
            continue
        for stmt in _own_statements(node):
            if not any(_calls(c, called) for c in ast.walk(stmt)):
                continue
            code = ast.get_source_segment(text, stmt) or ""
            if 0 < len(code) <= _MAX_CALL_SITE_CHARS and code.count("\n") < _MAX_SNIPPET_LINES:
                where = f"call site in `{caller.qualname}` ({caller.path})"
                found.append(DocExample(_dedent_continuation(code), where, "call site"))
                break
    return found


def use_sites(info: FunctionInfo, text: str, skip: list[range]) -> list[DocExample]:
    """Where the module uses the function without calling it (a table of handlers, a
    `partial(...)`, a default argument): the line that wires it in. `skip`: line ranges of the
    task's own functions, whose bodies are removed."""
    try:
        tree = pysource.parse(text)
    except (SyntaxError, ValueError):
        return []
    lines = text.splitlines()
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Name) and node.id == info.name and isinstance(node.ctx, ast.Load)
        ):
            continue
        if any(node.lineno in span for span in skip):
            continue
        line = lines[node.lineno - 1].strip()
        if line and len(line) <= 300:
            where = f"use site in `{info.module}` (line {node.lineno})"
            return [DocExample(line, where, "call site")]
    return []


def _own_statements(node: ast.AST):
    for child in ast.walk(node):
        if isinstance(child, ast.stmt) and not isinstance(
            child,
            ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.If | ast.For | ast.While,
        ):
            if isinstance(child, ast.With | ast.Try):
                continue
            yield child


def _calls(node: ast.AST, name: str) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == name) or (
        isinstance(func, ast.Attribute) and func.attr == name
    )


def _dedent_continuation(code: str) -> str:
    lines = code.splitlines()
    if len(lines) < 2:
        return code
    margin = min((len(ln) - len(ln.lstrip()) for ln in lines[1:] if ln.strip()), default=0)
    return "\n".join([lines[0], *[ln[max(0, margin - 4) :] for ln in lines[1:]]])


def module_options(path: str, text: str) -> list[Option]:
    """Command-line options defined in a module: argparse `add_argument` and click options."""
    try:
        tree = pysource.parse(text)
    except (SyntaxError, ValueError):
        return []
    owners: dict[ast.AST, str] = {}

    def visit(node: ast.AST, prefix: str, owner: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.", owner)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                qualname = f"{prefix}{child.name}"
                for decorator in child.decorator_list:
                    owners[decorator] = qualname
                    for inner in ast.walk(decorator):
                        owners[inner] = qualname
                visit(child, f"{qualname}.", owner or qualname)
            else:
                owners[child] = owner
                visit(child, prefix, owner)

    visit(tree, "", "")
    options: list[Option] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if node.func.attr not in ("add_argument", "add_option", "option", "argument"):
            continue
        flags = tuple(
            a.value
            for a in node.args
            if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("-")
        )
        if not flags:
            continue
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        options.append(
            Option(
                flags=flags,
                help=_literal(keywords.get("help")),
                default=_literal(keywords.get("default"), text),
                choices=_literal(keywords.get("choices"), text),
                path=path,
                function=owners.get(node, ""),
            )
        )
    return options[:_MAX_OPTIONS]


def _literal(node: ast.AST | None, text: str = "") -> str:
    if node is None:
        return ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return " ".join(node.value.split())
    if text:
        segment = ast.get_source_segment(text, node) or ""
        return f"`{segment}`" if segment and len(segment) <= 80 else ""
    return ""


def neighbour_docstrings(
    info: FunctionInfo, table: FunctionTable, cluster: set[str], related: list[str]
) -> list[tuple[str, str]]:
    """(name, first paragraph) of docstrings next to the function that speak about it: of
    functions of the same module that name it, and of the functions it is related to."""
    found: dict[str, str] = {}
    for other in table.in_file(info.path):
        if other.id in cluster or other.nested or not other.docstring:
            continue
        if re.search(rf"(?<![\w]){re.escape(info.name)}(?![\w])", other.docstring):
            found[other.qualname] = _first_paragraph(other.docstring)
    for fid in related:
        other = table.functions.get(fid)
        if other is None or fid in cluster or not other.docstring or other.nested:
            continue
        found.setdefault(other.qualname, _first_paragraph(other.docstring))
    return list(found.items())[:4]


def _first_paragraph(docstring: str) -> str:
    text = " ".join(docstring.strip().split("\n\n", 1)[0].split())
    return text if len(text) <= _MAX_PARAGRAPH_CHARS else text[: _MAX_PARAGRAPH_CHARS - 3] + "..."


def name_words(name: str) -> str:
    """`_visible_width` -> "visible width"; `parseDate` -> "parse date"."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name.strip("_"))
    return " ".join(part for part in re.split(r"[_\s]+", spaced) if part).lower()
