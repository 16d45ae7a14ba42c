"""Plain-text helpers: wrapping, justification, statistics, reading time, excerpts."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from .blocks import Paragraph, parse_blocks
from .inline import parse_inline, to_plain

# Split on ordinary whitespace only: a no-break space (U+00A0) keeps words together.
_WHITESPACE_RE = re.compile(r"[ \t\n\r\f\v]+")

_ABBREVIATIONS = frozenset({"e.g.", "i.e.", "etc.", "vs.", "mr.", "mrs.", "dr.", "no."})

_CLOSING_PUNCTUATION = "\"')]»”’"


@dataclass(frozen=True)
class TextStats:
    words: int
    sentences: int
    characters: int
    average_word_length: float
    longest_word: str


def _split_words(text: str) -> list[str]:
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    return [word for word in _WHITESPACE_RE.split(text) if word]


def _break_long_word(word: str, width: int) -> list[str]:
    """Cut a word into pieces of at most ``width``, preferring to break after a hyphen."""
    if width < 1:
        raise ValueError("width must be at least 1")
    pieces = []
    while len(word) > width:
        cut = word.rfind("-", 0, width)
        cut = cut + 1 if cut > 0 else width
        pieces.append(word[:cut])
        word = word[cut:]
    if word:
        pieces.append(word)
    return pieces


def wrap(text: str, width: int = 72, break_long_words: bool = True) -> list[str]:
    """Greedy word wrap into lines of at most ``width`` characters.

    Words longer than the width are broken (after a hyphen when possible) unless
    ``break_long_words`` is False, in which case they get a line of their own.
    """
    if width < 1:
        raise ValueError("width must be at least 1")
    lines: list[str] = []
    current = ""
    for word in _split_words(text):
        pieces = _break_long_word(word, width) if break_long_words and len(word) > width else [word]
        for piece in pieces:
            if not current:
                current = piece
            elif len(current) + 1 + len(piece) <= width:
                current = f"{current} {piece}"
            else:
                lines.append(current)
                current = piece
    if current:
        lines.append(current)
    return lines


def _distribute_spaces(words: list[str], width: int) -> str:
    """Join words with spaces so the line is exactly ``width`` long; leftmost gaps get extra."""
    if not words:
        raise ValueError("no words to justify")
    if len(words) == 1:
        return words[0]
    gaps = len(words) - 1
    spaces = width - sum(len(word) for word in words)
    if spaces < gaps:
        raise ValueError(f"words do not fit in {width} columns")
    base, extra = divmod(spaces, gaps)
    parts = [word + " " * (base + (1 if index < extra else 0)) for index, word in enumerate(words[:-1])]
    return "".join(parts) + words[-1]


def justify(text: str, width: int = 72) -> str:
    """Wrap and justify: every line but the last is exactly ``width`` characters."""
    lines = wrap(text, width)
    justified = [_distribute_spaces(line.split(" "), width) for line in lines[:-1]]
    justified.extend(lines[-1:])
    return "\n".join(justified)


def word_count(text: str) -> int:
    """Words that contain at least one letter or digit (a lone ``—`` is not a word)."""
    return sum(1 for word in _split_words(text) if any(char.isalnum() for char in word))


def _count_sentences(text: str) -> int:
    """Sentences end with ``.``, ``!``, ``?`` or ``…``, possibly before closing quotes.

    Known abbreviations do not end a sentence, and trailing words without a full stop
    still form one.
    """
    count = 0
    pending = False
    for word in _split_words(text):
        if not any(char.isalnum() for char in word):
            continue
        pending = True
        if word.casefold() in _ABBREVIATIONS:
            continue
        if word.rstrip(_CLOSING_PUNCTUATION).endswith((".", "!", "?", "…")):
            count += 1
            pending = False
    return count + (1 if pending else 0)


def text_stats(text: str) -> TextStats:
    """Counts for a piece of plain text; the average word length ignores punctuation."""
    words = [word for word in _split_words(text) if any(char.isalnum() for char in word)]
    letters = [sum(1 for char in word if char.isalnum()) for word in words]
    # max() keeps the first of equally long words.
    longest = max(words, key=lambda word: sum(1 for char in word if char.isalnum()), default="")
    return TextStats(
        words=word_count(text),
        sentences=_count_sentences(text),
        characters=sum(1 for char in text if not char.isspace()),
        average_word_length=round(sum(letters) / len(letters), 2) if letters else 0.0,
        longest_word=longest.strip(".,;:!?\"'()[]«»“”"),
    )


def _format_minutes(minutes: int) -> str:
    """``5`` -> ``"5 min"``, ``65`` -> ``"1 h 5 min"``, ``120`` -> ``"2 h"``."""
    if minutes < 0:
        raise ValueError("minutes must not be negative")
    hours, rest = divmod(minutes, 60)
    if hours and rest:
        return f"{hours} h {rest} min"
    if hours:
        return f"{hours} h"
    return f"{rest} min"


def reading_time(text: str, words_per_minute: int = 200) -> str:
    """Estimated reading time, rounded up to whole minutes (at least 1 for non-empty text)."""
    if words_per_minute < 1:
        raise ValueError("words_per_minute must be at least 1")
    words = word_count(text)
    if words == 0:
        return "0 min"
    return _format_minutes(max(1, math.ceil(words / words_per_minute)))


def truncate_words(text: str, limit: int, ellipsis: str = "…") -> str:
    """Keep the first ``limit`` words; trailing punctuation of the last one is dropped before the ellipsis."""
    if limit < 1:
        raise ValueError("limit must be at least 1")
    words = _split_words(text)
    if len(words) <= limit:
        return " ".join(words)
    kept = words[:limit]
    kept[-1] = kept[-1].rstrip(",;:.—-") or kept[-1]
    return " ".join(kept) + ellipsis


def excerpt(markup: str, limit: int = 30) -> str:
    """Plain text of the first paragraph of a document, cut to ``limit`` words."""
    for block in parse_blocks(markup):
        if isinstance(block, Paragraph):
            return truncate_words(to_plain(parse_inline(block.text)), limit)
    return ""
