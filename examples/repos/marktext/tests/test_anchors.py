import unittest

import pytest

from marktext import Heading, Paragraph, build_toc, heading_anchors, parse_blocks, render_toc, slugify, unique_slug
from marktext.anchors import TocEntry, _nest, _strip_accents


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Hello World", "hello-world"),
        ("  Hello,   World!  ", "hello-world"),
        ("Crème Brûlée", "creme-brulee"),
        ("Straße & Smørrebrød", "strasse-smorrebrod"),
        ("snake_case and kebab-case", "snake-case-and-kebab-case"),
        ("Usage [advanced] (v2.0)", "usage-advanced-v2-0"),
        ("ジャズ Café", "ジャズ-cafe"),
        ("!!!", ""),
    ],
    ids=["plain text", "punctuation and spaces", "ünïcödé café accents", "ß and ø", "underscores", "nested [brackets]", "カタカナ", "only punctuation"],
)
def test_slugify(text, expected):
    assert slugify(text) == expected


def test_slugify_options():
    assert slugify("Hello World", separator="_") == "hello_world"
    assert slugify("a very long heading title", max_length=12) == "a-very-long"
    assert slugify("supercalifragilistic", max_length=5) == "super"


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"separator": ""}, ValueError, "separator must be non-empty"),
        ({"separator": "x"}, ValueError, "no letters or digits"),
        ({"max_length": 0}, ValueError, "max_length must be at least 1"),
    ],
)
def test_slugify_rejects_bad_options(kwargs, error, message):
    with pytest.raises(error, match=message):
        slugify("Hello", **kwargs)


def test_strip_accents():
    assert _strip_accents("Crème Brûlée") == "Creme Brulee"
    assert _strip_accents("Ærøskøbing") == "AEroskobing"
    assert _strip_accents("ジ") == "ジ"


class UniqueSlugTest(unittest.TestCase):
    def test_repeats_get_numbers(self):
        seen = {}
        self.assertEqual([unique_slug("intro", seen) for _ in range(3)], ["intro", "intro-1", "intro-2"])

    def test_numbered_slugs_that_already_exist_are_skipped(self):
        seen = {}
        results = [unique_slug(slug, seen) for slug in ["a", "a-1", "a"]]
        self.assertEqual(results, ["a", "a-1", "a-2"])

    def test_empty_slug_becomes_section(self):
        seen = {}
        self.assertEqual([unique_slug("", seen), unique_slug("", seen)], ["section", "section-1"])


def test_heading_anchors_use_plain_text_and_are_unique(guide_blocks):
    assert [anchor for _heading, anchor in heading_anchors(guide_blocks)] == [
        "getting-started",
        "install",
        "usage-tips",
        "install-1",
    ]


def test_heading_anchors_strip_markup():
    blocks = [Heading(2, "The *`render`* [function](x)"), Paragraph("# not a heading")]
    assert heading_anchors(blocks) == [(blocks[0], "the-render-function")]


def test_nest():
    flat = [TocEntry(1, "A", "a"), TocEntry(3, "B", "b"), TocEntry(2, "C", "c"), TocEntry(1, "D", "d")]
    tree = _nest(flat)
    assert [entry.anchor for entry in tree] == ["a", "d"]
    assert [child.anchor for child in tree[0].children] == ["b", "c"]


class TestBuildToc:
    def test_it_nests_headings(self, guide_blocks):
        toc = build_toc(guide_blocks)
        assert [(entry.title, entry.anchor) for entry in toc] == [("Getting started", "getting-started")]
        assert [(entry.level, entry.title, entry.anchor) for entry in toc[0].children] == [
            (2, "Install", "install"),
            (2, "Usage & tips", "usage-tips"),
            (2, "Install", "install-1"),
        ]

    def test_max_level_limits_depth_but_not_anchor_numbering(self):
        blocks = parse_blocks("# A\n### A\n# A")
        assert [entry.anchor for entry in build_toc(blocks, max_level=1)] == ["a", "a-2"]

    def test_bad_max_level(self):
        with pytest.raises(ValueError, match="max_level must be between 1 and 6, got 7"):
            build_toc([], max_level=7)


def test_render_toc(guide_blocks):
    assert render_toc(build_toc(guide_blocks)) == (
        "- [Getting started](#getting-started)\n"
        "  - [Install](#install)\n"
        "  - [Usage & tips](#usage-tips)\n"
        "  - [Install](#install-1)"
    )


def test_render_toc_escapes_brackets_and_checks_indent():
    entries = [TocEntry(1, "Arrays [] and \\", "arrays-and")]
    assert render_toc(entries, indent=4) == "- [Arrays \\[\\] and \\\\](#arrays-and)"
    with pytest.raises(ValueError, match="indent must be at least 1"):
        render_toc(entries, indent=0)


def test_render_toc_of_a_deep_document():
    blocks = parse_blocks("# One\n## Two\n### Three\n## Two\n# [Four] *4*")
    assert render_toc(build_toc(blocks, max_level=6)) == (
        "- [One](#one)\n"
        "  - [Two](#two)\n"
        "    - [Three](#three)\n"
        "  - [Two](#two-1)\n"
        "- [\\[Four\\] 4](#four-4)"
    )
    assert render_toc([]) == ""
