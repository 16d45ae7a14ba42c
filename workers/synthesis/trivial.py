"""Answers visible next to the task: a function to implement whose body a sibling repeats.

A solver who finds, in the same module, another function whose body is (nearly) the same as
the one removed can copy it: the task scores well and measures nothing. Bodies are compared as
token sequences (comments and layout ignored, names and literals kept), so two classes'
identical two-line `__init__`s match and two setters of different attributes do not.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from workers import pysource

# Bodies this close are "the same body": renaming one variable of a short body stays below it.
NEAR_IDENTICAL = 0.9
# A task is trivial when the functions whose answer is visible hold this share of its bodies.
TRIVIAL_SHARE = 0.5
_SKIPPED_TOKENS = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENDMARKER,
}


@dataclass
class TrivialCheck:
    trivial: bool
    share: float  # of the body tokens to write, the share a sibling already shows
    visible: dict[str, str] = field(default_factory=dict)  # function -> sibling that repeats it

    def as_dict(self) -> dict:
        return {"trivial": self.trivial, "share": round(self.share, 3), "visible": self.visible}


def function_bodies(text: str) -> dict[str, tuple[str, ...]]:
    """Qualified name -> body tokens (docstring left out) of every function of a module."""
    try:
        tree = pysource.parse(text)
    except (SyntaxError, ValueError):
        return {}
    bodies: dict[str, tuple[str, ...]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                bodies[f"{prefix}{child.name}"] = _tokens(text, child)
                visit(child, f"{prefix}{child.name}.")

    visit(tree, "")
    return bodies


def _tokens(text: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...]:
    body = node.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    if not body:
        return ()
    lines = text.splitlines(keepends=True)
    first, last = body[0].lineno, body[-1].end_lineno or body[-1].lineno
    source = "".join(lines[first - 1 : last])
    found: list[str] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(_dedent(source)).readline):
            if token.type not in _SKIPPED_TOKENS:
                found.append(token.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return tuple(source.split())
    return tuple(found)


def _dedent(source: str) -> str:
    lines = source.splitlines(keepends=True)
    margin = min((len(ln) - len(ln.lstrip()) for ln in lines if ln.strip()), default=0)
    return "".join(ln[margin:] if ln.strip() else "\n" for ln in lines)


def similar(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    if len(a) < 3 or len(b) < 3:
        return False
    if min(len(a), len(b)) / max(len(a), len(b)) < NEAR_IDENTICAL:
        return False
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    return matcher.real_quick_ratio() >= NEAR_IDENTICAL and matcher.ratio() >= NEAR_IDENTICAL


def near_copies(text: str) -> dict[str, str]:
    """Functions of one module whose body another function of the module repeats."""
    bodies = function_bodies(text)
    names = sorted(bodies)
    found: dict[str, str] = {}
    for index, name in enumerate(names):
        for other in names[index + 1 :]:
            if similar(bodies[name], bodies[other]):
                found.setdefault(name, other)
                found.setdefault(other, name)
    return found


def check_trivial(files: dict[str, str], functions: list[tuple[str, str]]) -> TrivialCheck:
    """Whether the answer to implementing `functions` ((path, qualified name), as they are in
    the finished code `files`) is visible in siblings that stay in the code."""
    removed = set(functions)
    visible: dict[str, str] = {}
    total = 0
    shown = 0
    by_path: dict[str, dict[str, tuple[str, ...]]] = {}
    for path, qualname in functions:
        if path not in files:
            continue
        bodies = by_path.setdefault(path, function_bodies(files[path]))
        body = bodies.get(qualname)
        if body is None:
            continue
        total += len(body)
        for other, other_body in sorted(bodies.items()):
            if (path, other) in removed or other.startswith(f"{qualname}."):
                continue
            if similar(body, other_body):
                visible[f"{path}::{qualname}"] = other
                shown += len(body)
                break
    share = shown / total if total else 0.0
    return TrivialCheck(trivial=share >= TRIVIAL_SHARE, share=share, visible=visible)
