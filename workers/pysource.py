"""Parsing Python source text (a repository's, an agent's: untrusted) safely from any thread.

CPython 3.11 keeps the `ast` module's recursion counter in state that threads share: two
threads that parse at once (a page rendered while a job validates, in one process) can make
either parse fail with "SystemError: AST constructor recursion depth mismatch". Every parse of
the application goes through this one lock. A text nested too deeply to parse is a SyntaxError
like any other text that does not parse.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse(text: str, *, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    with _LOCK:
        try:
            return ast.parse(text, filename=filename, mode=mode)
        except (RecursionError, MemoryError) as exc:
            raise SyntaxError(f"{filename}: too deeply nested to parse ({exc})") from None
