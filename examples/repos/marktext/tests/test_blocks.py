import unittest

import pytest

from marktext import BlockError, CodeBlock, Heading, ListBlock, Paragraph, Quote, Rule, Table, parse_blocks
from marktext.blocks import (
    _heading_level,
    _is_rule,
    _list_marker,
    _parse_alignment,
    _parse_list,
    _parse_table,
    _read_fence,
    _split_row,
)


class HeadingLevelTest(unittest.TestCase):
    def test_levels(self):
        self.assertEqual(_heading_level("# Title"), (1, "Title"))
        self.assertEqual(_heading_level("###### Six"), (6, "Six"))
        self.assertEqual(_heading_level("   ## Indented"), (2, "Indented"))

    def test_closing_hashes_are_removed(self):
        self.assertEqual(_heading_level("## Title ##"), (2, "Title"))
        self.assertEqual(_heading_level("## C# #"), (2, "C#"))
        self.assertEqual(_heading_level("#"), (1, ""))

    def test_non_headings(self):
        for line in ["#hashtag", "####### seven", "    # code", "plain"]:
            with self.subTest(line=line):
                self.assertIsNone(_heading_level(line))


class RuleTest(unittest.TestCase):
    def test_rules(self):
        for line in ["---", "***", "_ _ _", "  - - - -"]:
            with self.subTest(line=line):
                self.assertTrue(_is_rule(line))

    def test_not_rules(self):
        for line in ["--", "-*-", "    ---", "--- x"]:
            with self.subTest(line=line):
                self.assertFalse(_is_rule(line))


@pytest.mark.parametrize(
    "line, expected",
    [
        ("- item", (False, 1, "-", "item")),
        ("* item", (False, 1, "*", "item")),
        ("3) third", (True, 3, ")", "third")),
        ("10. tenth", (True, 10, ".", "tenth")),
        ("-", (False, 1, "-", "")),
        ("-item", None),
        ("**bold**", None),
        ("1234567890. too long", None),
    ],
    ids=["dash", "star", "paren ordered 3)", "dot ordered", "empty item", "no space", "**bold** text", "ten digits"],
)
def test_list_marker(line, expected):
    assert _list_marker(line) == expected


def test_parse_list_collects_items_and_continuations():
    lines = ["1. one", "2. two", "   still two", "3. three", "", "after"]
    assert _parse_list(lines, 0) == (ListBlock(True, ["one", "two still two", "three"], 1), 4)


def test_parse_list_stops_at_a_different_marker():
    block, end = _parse_list(["- a", "* b"], 0)
    assert (block.items, end) == (["a"], 1)
    with pytest.raises(BlockError, match="not a list item"):
        _parse_list(["plain"], 0)


class FenceTest(unittest.TestCase):
    def test_fence_with_language(self):
        lines = ["```python extra words", "x = 1", "", "  y = 2", "```", "after"]
        self.assertEqual(_read_fence(lines, 0), (CodeBlock("x = 1\n\n  y = 2", "python"), 5))

    def test_longer_closing_fence_and_tildes(self):
        self.assertEqual(_read_fence(["~~~", "```", "~~~~"], 0), (CodeBlock("```", ""), 3))

    def test_unclosed_fence(self):
        with self.assertRaisesRegex(BlockError, r"unclosed code fence ``` \(at 2\)"):
            parse_blocks("intro\n```\ncode")

    def test_backticks_in_info_string(self):
        with self.assertRaisesRegex(BlockError, "cannot contain backticks"):
            _read_fence(["``` a`b", "```"], 0)


@pytest.mark.parametrize(
    "line, expected",
    [
        ("| a | b |", ["a", "b"]),
        ("a | b", ["a", "b"]),
        (r"| x \| y | z |", ["x | y", "z"]),
        ("| ünï | cödé |", ["ünï", "cödé"]),
        ("|  |", [""]),
    ],
    ids=["outer pipes", "no outer pipes", r"escaped \| pipe", "ünïcödé cells", "one empty cell"],
)
def test_split_row(line, expected):
    assert _split_row(line) == expected


def test_parse_alignment():
    assert _parse_alignment([":--", "--:", ":-:", "---", " : - : "]) == ["left", "right", "center", None, "center"]
    assert _parse_alignment(["---", "abc"]) is None
    assert _parse_alignment([""]) is None


def test_parse_table_pads_and_cuts_rows():
    lines = ["| a | b |", "|---|--:|", "| 1 |", "| 1 | 2 | 3 |", "", "| not | table |"]
    assert _parse_table(lines, 0) == (Table(["a", "b"], [None, "right"], [["1", ""], ["1", "2"]]), 4)
    assert _parse_table(["| a |", "plain"], 0) is None


def test_table_with_mismatched_delimiter_row():
    with pytest.raises(BlockError, match=r"header has 2 cells but its delimiter row has 3 \(at 4\)"):
        parse_blocks("text\n\n| a | b |\n|---|---|---|\n")


class TestParseBlocks:
    def test_guide(self, guide_blocks):
        assert [type(block).__name__ for block in guide_blocks] == [
            "Heading",
            "Paragraph",
            "Heading",
            "CodeBlock",
            "Heading",
            "ListBlock",
            "Quote",
            "Heading",
            "Table",
        ]
        assert guide_blocks[3] == CodeBlock("pip install marktext", "sh")
        assert guide_blocks[6] == Quote([Paragraph("Note: output is escaped.")])

    def test_paragraph_lines_are_joined_and_interrupted(self):
        text = "first line\nsecond line\n# Heading\nthird\n- item"
        assert parse_blocks(text) == [
            Paragraph("first line\nsecond line"),
            Heading(1, "Heading"),
            Paragraph("third"),
            ListBlock(False, ["item"]),
        ]

    def test_windows_line_endings_and_rules(self):
        assert parse_blocks("a\r\n\r\n---\r\nb") == [Paragraph("a"), Rule(), Paragraph("b")]

    def test_quotes_nest_blocks(self):
        assert parse_blocks("> # Title\n> text\n>\n> - x") == [
            Quote([Heading(1, "Title"), Paragraph("text"), ListBlock(False, ["x"])])
        ]

    def test_errors_inside_quotes_report_the_outer_line(self):
        with pytest.raises(BlockError, match=r"\(at 4\)"):
            parse_blocks("intro\n\n> ok\n> ```\n> never closed")

    def test_ordered_lists_keep_their_start(self):
        assert parse_blocks("7. seven\n8. eight") == [ListBlock(True, ["seven", "eight"], 7)]

    def test_empty_text(self):
        assert parse_blocks("") == []
        assert parse_blocks("\n \n\t\n") == []

    def test_non_strings_are_rejected(self):
        with pytest.raises(TypeError, match="expected str, got NoneType"):
            parse_blocks(None)
