"""marktext: a small toolkit for a Markdown-like markup language."""
from .anchors import TocEntry, build_toc, heading_anchors, render_toc, slugify, unique_slug
from .blocks import CodeBlock, Heading, ListBlock, Paragraph, Quote, Rule, Table, parse_blocks
from .errors import BlockError, MarkupError, UnclosedMarkupError, UnsafeURLError
from .html import escape_html, render, render_block, render_inline
from .inline import Code, Emphasis, Link, Strong, Text, parse_inline, to_plain
from .textutil import excerpt, justify, reading_time, text_stats, truncate_words, word_count, wrap
from .tokenizer import Token, tokenize

__version__ = "1.2.0"

__all__ = [
    "BlockError",
    "Code",
    "CodeBlock",
    "Emphasis",
    "Heading",
    "Link",
    "ListBlock",
    "MarkupError",
    "Paragraph",
    "Quote",
    "Rule",
    "Strong",
    "Table",
    "Text",
    "TocEntry",
    "Token",
    "UnclosedMarkupError",
    "UnsafeURLError",
    "build_toc",
    "escape_html",
    "excerpt",
    "heading_anchors",
    "justify",
    "parse_blocks",
    "parse_inline",
    "reading_time",
    "render",
    "render_block",
    "render_inline",
    "render_toc",
    "slugify",
    "text_stats",
    "to_plain",
    "tokenize",
    "truncate_words",
    "unique_slug",
    "word_count",
    "wrap",
]
