"""Split inline text into tokens.

Delimiters (``*``, ``_``, `````) come as *runs*: ``**`` is one token. Brackets and
parentheses are single-character tokens. A backslash escapes any punctuation in
:data:`ESCAPABLE`; the escaped character becomes plain text.
"""
from __future__ import annotations

from dataclasses import dataclass

SPECIAL = {
    "*": "star",
    "_": "underscore",
    "`": "backtick",
    "[": "lbracket",
    "]": "rbracket",
    "(": "lparen",
    ")": "rparen",
}

ESCAPABLE = frozenset("\\*_`[]()#!<>|")


@dataclass(frozen=True)
class Token:
    kind: str
    value: str
    position: int


def _read_text_run(text: str, start: int) -> tuple[str, int]:
    """Read plain text from ``start`` up to the next special character.

    Backslash escapes are resolved; returns the text and the index where it stopped.
    """
    out = []
    index = start
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text) and text[index + 1] in ESCAPABLE:
            out.append(text[index + 1])
            index += 2
            continue
        if char in SPECIAL:
            break
        out.append(char)
        index += 1
    return "".join(out), index


def _read_delimiter_run(text: str, start: int) -> tuple[str, int]:
    """Read a run of one repeated delimiter; brackets and parentheses never form runs."""
    char = text[start]
    if char not in SPECIAL:
        raise ValueError(f"not a delimiter: {char!r}")
    if char in "[]()":
        return char, start + 1
    end = start
    while end < len(text) and text[end] == char:
        end += 1
    return text[start:end], end


def _is_intraword(text: str, start: int, end: int) -> bool:
    """True when ``text[start:end]`` has a letter or digit on both sides (``snake_case``)."""
    if start == 0 or end >= len(text):
        return False
    return text[start - 1].isalnum() and text[end].isalnum()


def tokenize(text: str) -> list[Token]:
    """Tokenize inline text. Adjacent text (including intraword underscores) is merged."""
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    tokens: list[Token] = []
    index = 0
    while index < len(text):
        if text[index] in SPECIAL:
            value, end = _read_delimiter_run(text, index)
            kind = SPECIAL[text[index]]
            if kind == "underscore" and _is_intraword(text, index, end):
                kind = "text"
        else:
            value, end = _read_text_run(text, index)
            kind = "text"
        if kind == "text" and tokens and tokens[-1].kind == "text":
            previous = tokens.pop()
            tokens.append(Token("text", previous.value + value, previous.position))
        else:
            tokens.append(Token(kind, value, index))
        index = end
    return tokens
