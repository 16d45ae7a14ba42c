import unittest

import pytest

from marktext import excerpt, justify, reading_time, text_stats, truncate_words, word_count, wrap
from marktext.textutil import TextStats, _break_long_word, _count_sentences, _distribute_spaces, _format_minutes, _split_words


def test_split_words_keeps_no_break_spaces():
    assert _split_words(" a\tb\n\nc\u00a0d ") == ["a", "b", "c\u00a0d"]


@pytest.mark.parametrize(
    "word, width, expected",
    [
        ("abcdefgh", 3, ["abc", "def", "gh"]),
        ("well-known-fact", 8, ["well-", "known-", "fact"]),
        ("-abcdef", 4, ["-abc", "def"]),
        ("short", 10, ["short"]),
    ],
    ids=["no hyphen", "hyphen breaks", "leading hyphen", "fits"],
)
def test_break_long_word(word, width, expected):
    assert _break_long_word(word, width) == expected


class WrapTest(unittest.TestCase):
    def test_greedy_wrap(self):
        self.assertEqual(
            wrap("The quick brown fox jumps over the lazy dog", 10),
            ["The quick", "brown fox", "jumps over", "the lazy", "dog"],
        )

    def test_long_words_are_broken(self):
        self.assertEqual(wrap("a supercalifragilistic word", 8), ["a", "supercal", "ifragili", "stic", "word"])

    def test_long_words_can_stay_whole(self):
        self.assertEqual(wrap("a supercalifragilistic word", 8, break_long_words=False), ["a", "supercalifragilistic", "word"])

    def test_unicode_counts_characters(self):
        self.assertEqual(wrap("ünïcödé café crème", 12), ["ünïcödé café", "crème"])

    def test_empty_and_bad_width(self):
        self.assertEqual(wrap("   "), [])
        with self.assertRaisesRegex(ValueError, "width must be at least 1"):
            wrap("text", 0)


def test_distribute_spaces():
    assert _distribute_spaces(["a", "b", "c"], 8) == "a   b  c"
    assert _distribute_spaces(["alone"], 9) == "alone"
    with pytest.raises(ValueError, match="do not fit in 4 columns"):
        _distribute_spaces(["abc", "de"], 4)


def test_justify():
    assert justify("The quick brown fox jumps over the lazy dog", 16) == "The  quick brown\nfox  jumps  over\nthe lazy dog"
    assert justify("", 10) == ""


@pytest.mark.parametrize(
    "text, expected",
    [("one two  three", 3), ("a — b", 2), ("", 0), ("don't stop-me now!", 3), ("日本語 テキスト", 2)],
    ids=["spaces", "dash [not a word]", "empty", "apostrophes and hyphens", "日本語"],
)
def test_word_count(text, expected):
    assert word_count(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("One. Two! Three?", 3),
        ("See e.g. the docs. Then stop.", 2),
        ('He said "stop." Then left', 2),
        ("no full stop", 1),
        ("Wait… what?", 2),
        ("", 0),
        ("... ?", 0),
    ],
)
def test_count_sentences(text, expected):
    assert _count_sentences(text) == expected


def test_text_stats(lorem):
    assert text_stats(lorem) == TextStats(
        words=18, sentences=4, characters=95, average_word_length=4.89, longest_word="languages"
    )
    assert text_stats("") == TextStats(0, 0, 0, 0.0, "")


@pytest.mark.parametrize("minutes, expected", [(0, "0 min"), (5, "5 min"), (60, "1 h"), (65, "1 h 5 min"), (125, "2 h 5 min")])
def test_format_minutes(minutes, expected):
    assert _format_minutes(minutes) == expected


def test_format_minutes_rejects_negatives():
    with pytest.raises(ValueError, match="must not be negative"):
        _format_minutes(-1)


class TestReadingTime:
    def test_rounds_up(self):
        assert reading_time("word " * 401) == "3 min"
        assert reading_time("just a few words") == "1 min"
        assert reading_time("") == "0 min"

    def test_long_texts_show_hours(self):
        assert reading_time("w " * 1300, words_per_minute=20) == "1 h 5 min"

    def test_bad_speed(self):
        with pytest.raises(ValueError, match="words_per_minute must be at least 1"):
            reading_time("text", words_per_minute=0)


def test_truncate_words():
    assert truncate_words("one two, three four", 2) == "one two…"
    assert truncate_words("one two", 5) == "one two"
    assert truncate_words("a b c", 1, ellipsis=" [...]") == "a [...]"
    with pytest.raises(ValueError, match="limit must be at least 1"):
        truncate_words("text", 0)


def test_excerpt_uses_the_first_paragraph(guide):
    assert excerpt(guide, limit=6) == "Install the toolkit and read the…"
    assert excerpt("# Only a title\n\n```\ncode\n```") == ""


@pytest.mark.parametrize(
    "text, width, expected",
    [
        ("a b c d e f", 5, "a b c\nd e f"),
        ("one two three four", 9, "one   two\nthree\nfour"),
        ("ünïcödé café crème brûlée", 13, "ünïcödé  café\ncrème brûlée"),
        ("wordlongerthanwidth x", 8, "wordlong\nerthanwi\ndth x"),
    ],
    ids=["single spaces", "lone word lines", "ünïcödé café", "broken long word"],
)
def test_justify_lines_are_exactly_width(text, width, expected):
    result = justify(text, width)
    assert result == expected
    assert all(len(line) == width for line in result.split("\n")[:-1] if " " in line)


def test_text_stats_of_markup_free_text():
    stats = text_stats("Dr. Smith arrived. “Hello!” she said — twice")
    assert stats == TextStats(words=7, sentences=3, characters=37, average_word_length=4.43, longest_word="arrived")


def test_excerpt_strips_markup_and_skips_non_paragraphs():
    doc = "# Title\n\n- list item\n\n> quoted\n\nThe **real** [intro](x), with `code`, goes on and on."
    assert excerpt(doc, limit=5) == "The real intro, with code…"
    assert excerpt(doc) == "The real intro, with code, goes on and on."
    assert excerpt("") == ""
