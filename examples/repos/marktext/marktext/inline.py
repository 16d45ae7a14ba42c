"""Inline markup: ``*em*``, ``_em_``, ``**strong**``, `` `code` `` and ``[text](url)``.

The parser is lenient by default: a delimiter without a partner is kept as literal
text. With ``strict=True`` it raises :class:`UnclosedMarkupError` instead.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

from .errors import UnclosedMarkupError
from .tokenizer import Token, tokenize


@dataclass
class Text:
    value: str


@dataclass
class Code:
    value: str


@dataclass
class Emphasis:
    children: list = field(default_factory=list)


@dataclass
class Strong:
    children: list = field(default_factory=list)


@dataclass
class Link:
    url: str
    children: list = field(default_factory=list)


Node = Union[Text, Code, Emphasis, Strong, Link]


class _Unclosed(Exception):
    """Internal signal: the tokens ran out before the closer."""


class InlineParser:
    """Recursive-descent parser over tokens.

    Openers that failed once are remembered, so unbalanced input costs linear time
    instead of retrying every combination.
    """

    def __init__(self, tokens: list[Token], strict: bool = False) -> None:
        self.tokens = tokens
        self.strict = strict
        self._failed: set[int] = set()

    def parse(self) -> list[Node]:
        nodes, _index = self._parse_until(0, None)
        return nodes

    def _parse_until(self, index: int, closer: Optional[tuple[str, str]]) -> tuple[list[Node], int]:
        """Parse nodes from ``index`` until a token equal to ``closer``.

        Returns the nodes and the index just after the closer. Raises ``_Unclosed`` when
        the tokens run out before the closer.
        """
        nodes: list[Node] = []
        while index < len(self.tokens):
            token = self.tokens[index]
            if closer is not None and (token.kind, token.value) == closer and self._can_close(index):
                return nodes, index + 1
            if index in self._failed:
                node, index = Text(token.value), index + 1
            elif token.kind == "backtick":
                node, index = self._parse_code_span(index)
            elif token.kind in ("star", "underscore") and len(token.value) <= 2:
                node, index = self._parse_emphasis(index)
            elif token.kind == "lbracket":
                group, index = self._parse_link(index)
                nodes.extend(group)
                continue
            else:
                node, index = Text(token.value), index + 1
            nodes.append(node)
        if closer is not None:
            raise _Unclosed()
        return nodes, index

    def _can_close(self, index: int) -> bool:
        """A delimiter right after whitespace cannot close (``*a *b*`` emphasises only ``b``).

        Brackets always close.
        """
        token = self.tokens[index]
        if token.kind in ("rbracket", "rparen") or index == 0:
            return True
        previous = self.tokens[index - 1]
        if previous.kind == "text" and previous.value[-1:].isspace():
            return False
        return True

    def _fail(self, index: int, what: str) -> tuple[Node, int]:
        """Give up on the opener at ``index``: literal text, or an error when strict."""
        token = self.tokens[index]
        if self.strict:
            raise UnclosedMarkupError(f"unclosed {what} {token.value!r}", token.position)
        self._failed.add(index)
        return Text(token.value), index + 1

    def _parse_emphasis(self, index: int) -> tuple[Node, int]:
        """``*x*``/``_x_`` become Emphasis, ``**x**``/``__x__`` Strong."""
        opener = self.tokens[index]
        following = self.tokens[index + 1] if index + 1 < len(self.tokens) else None
        if following is None or (following.kind == "text" and following.value[:1].isspace()):
            # "2 * 3 * 4": a delimiter followed by whitespace opens nothing.
            return Text(opener.value), index + 1
        try:
            children, end = self._parse_until(index + 1, (opener.kind, opener.value))
        except _Unclosed:
            return self._fail(index, "emphasis")
        node_type = Strong if len(opener.value) == 2 else Emphasis
        return node_type(children), end

    def _parse_code_span(self, index: int) -> tuple[Node, int]:
        """Everything up to the next backtick run of the same length is literal code.

        One leading and one trailing space are stripped when both are present, so
        ``` `` `x` `` ``` can show backticks.
        """
        opener = self.tokens[index]
        for end in range(index + 1, len(self.tokens)):
            token = self.tokens[end]
            if token.kind == "backtick" and token.value == opener.value:
                content = "".join(t.value for t in self.tokens[index + 1 : end])
                if len(content) >= 2 and content.startswith(" ") and content.endswith(" ") and content.strip():
                    content = content[1:-1]
                return Code(content), end + 1
        return self._fail(index, "code span")

    def _parse_link(self, index: int) -> tuple[list[Node], int]:
        """``[label](url)`` as ``[Link]``.

        A bracketed label not followed by ``(`` is kept as literal brackets around its
        parsed content, even when strict, so ``[a [b]](u)`` still links.
        """
        try:
            children, after_label = self._parse_until(index + 1, ("rbracket", "]"))
        except _Unclosed:
            node, end = self._fail(index, "link label")
            return [node], end
        if after_label >= len(self.tokens) or self.tokens[after_label].kind != "lparen":
            return [Text("["), *children, Text("]")], after_label
        parts = []
        depth = 0  # balanced parentheses may appear inside the target
        for end in range(after_label + 1, len(self.tokens)):
            token = self.tokens[end]
            if token.kind == "lparen":
                depth += 1
            elif token.kind == "rparen":
                if depth == 0:
                    return [Link("".join(parts).strip(), children)], end + 1
                depth -= 1
            parts.append(token.value)
        node, end = self._fail(index, "link target")
        return [node], end


def _merge_text(nodes: list[Node]) -> list[Node]:
    """Join adjacent Text nodes, recursively, dropping empty ones."""
    merged: list[Node] = []
    for node in nodes:
        if isinstance(node, (Emphasis, Strong, Link)):
            node.children = _merge_text(node.children)
        if isinstance(node, Text):
            if not node.value:
                continue
            if merged and isinstance(merged[-1], Text):
                merged[-1] = Text(merged[-1].value + node.value)
                continue
        merged.append(node)
    return merged


def parse_inline(text: str, strict: bool = False) -> list[Node]:
    """Parse inline markup into a list of nodes."""
    parser = InlineParser(tokenize(text), strict=strict)
    return _merge_text(parser.parse())


def to_plain(nodes: list[Node]) -> str:
    """The text a reader sees, without markup (link targets are dropped)."""
    parts = []
    for node in nodes:
        if isinstance(node, (Text, Code)):
            parts.append(node.value)
        elif isinstance(node, (Emphasis, Strong, Link)):
            parts.append(to_plain(node.children))
        else:
            raise TypeError(f"not an inline node: {type(node).__name__}")
    return "".join(parts)
