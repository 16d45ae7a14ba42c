import unittest

import pytest

from marktext.tokenizer import Token, _is_intraword, _read_delimiter_run, _read_text_run, tokenize


class TokenizeTest(unittest.TestCase):
    def test_plain_text_is_one_token(self):
        self.assertEqual(tokenize("plain words"), [Token("text", "plain words", 0)])

    def test_delimiters_form_runs(self):
        self.assertEqual(
            tokenize("**bold**"),
            [Token("star", "**", 0), Token("text", "bold", 2), Token("star", "**", 6)],
        )

    def test_brackets_never_form_runs(self):
        kinds = [token.kind for token in tokenize("[[x]]")]
        self.assertEqual(kinds, ["lbracket", "lbracket", "text", "rbracket", "rbracket"])

    def test_escapes_become_text(self):
        self.assertEqual(tokenize(r"\*not\* \[a link\]"), [Token("text", "*not* [a link]", 0)])

    def test_intraword_underscores_are_text(self):
        self.assertEqual(tokenize("snake_case_name"), [Token("text", "snake_case_name", 0)])

    def test_underscores_at_word_edges_are_delimiters(self):
        self.assertEqual([t.kind for t in tokenize("_under_ score")], ["underscore", "text", "underscore", "text"])

    def test_non_strings_are_rejected(self):
        with self.assertRaisesRegex(TypeError, "expected str, got bytes"):
            tokenize(b"bytes")


@pytest.mark.parametrize(
    "text, start, expected",
    [
        ("ab\\*c*d", 0, ("ab*c", 5)),
        ("a\\b", 0, ("a\\b", 3)),
        ("end\\", 0, ("end\\", 4)),
        ("x*yz", 2, ("yz", 4)),
    ],
    ids=["escaped star", "backslash before a letter", "trailing backslash", "from the middle"],
)
def test_read_text_run(text, start, expected):
    assert _read_text_run(text, start) == expected


def test_read_delimiter_run():
    assert _read_delimiter_run("***x", 0) == ("***", 3)
    assert _read_delimiter_run("((", 0) == ("(", 1)
    assert _read_delimiter_run("a``b", 1) == ("``", 3)
    with pytest.raises(ValueError, match="not a delimiter: 'a'"):
        _read_delimiter_run("abc", 0)


@pytest.mark.parametrize(
    "text, start, end, expected",
    [("a_b", 1, 2, True), ("_b", 0, 1, False), ("a_", 1, 2, False), ("a _b", 2, 3, False), ("é_ü", 1, 2, True)],
    ids=["between letters", "at start", "at end", "after space", "ünïcödé letters"],
)
def test_is_intraword(text, start, end, expected):
    assert _is_intraword(text, start, end) is expected


def test_positions_point_into_the_source():
    text = "a `code` [link](u)"
    for token in tokenize(text):
        if token.kind != "text":
            assert text[token.position : token.position + len(token.value)] == token.value
