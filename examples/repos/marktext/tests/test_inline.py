import pytest

from marktext import UnclosedMarkupError, parse_inline, to_plain
from marktext.inline import Code, Emphasis, InlineParser, Link, Strong, Text, _merge_text
from marktext.tokenizer import tokenize


@pytest.mark.parametrize(
    "text, expected",
    [
        ("plain text", [Text("plain text")]),
        ("*em*", [Emphasis([Text("em")])]),
        ("_em_ and __strong__", [Emphasis([Text("em")]), Text(" and "), Strong([Text("strong")])]),
        ("*a **b** c*", [Emphasis([Text("a "), Strong([Text("b")]), Text(" c")])]),
        ("use `x * y`", [Text("use "), Code("x * y")]),
        ("`` `tick` ``", [Code("`tick`")]),
        ("[docs](https://e.org/a_b)", [Link("https://e.org/a_b", [Text("docs")])]),
        ("[a *b*](u)", [Link("u", [Text("a "), Emphasis([Text("b")])])]),
        ("[nested [brackets]](x)", [Link("x", [Text("nested [brackets]")])]),
        ("[wiki](https://w.org/A_(b))", [Link("https://w.org/A_(b)", [Text("wiki")])]),
        ("*ünïcödé café*", [Emphasis([Text("ünïcödé café")])]),
    ],
    ids=[
        "plain text",
        "emphasis",
        "em and strong",
        "strong inside em",
        "code span",
        "code with `ticks`",
        "link",
        "link with *em*",
        "nested [brackets]",
        "parens (in url)",
        "ünïcödé café",
    ],
)
def test_parse_inline(text, expected):
    assert parse_inline(text) == expected


@pytest.mark.parametrize(
    "text",
    ["*unclosed", "2 * 3 * 4", "**", "[x] alone", "[x](no end", "`open code", "a_b_c"],
)
def test_lenient_parsing_keeps_unmatched_markup_as_text(text):
    assert parse_inline(text) == [Text(text)]


def test_a_delimiter_after_a_space_does_not_close():
    assert parse_inline("*a *b*") == [Text("*a "), Emphasis([Text("b")])]


@pytest.mark.parametrize(
    "text, message",
    [
        ("*open", r"unclosed emphasis '\*' \(at 0\)"),
        ("ok `code", r"unclosed code span '`' \(at 3\)"),
        ("[label", r"unclosed link label '\[' \(at 0\)"),
        ("[label](target", "unclosed link target"),
    ],
)
def test_strict_mode_raises_on_unclosed_markup(text, message):
    with pytest.raises(UnclosedMarkupError, match=message) as excinfo:
        parse_inline(text, strict=True)
    assert excinfo.value.position is not None


def test_strict_mode_accepts_balanced_markup_and_lone_brackets():
    assert parse_inline("**ok** [x] 2 * 3", strict=True) == [Strong([Text("ok")]), Text(" [x] 2 * 3")]


def test_unbalanced_input_is_parsed_in_reasonable_time():
    text = "*a " * 400
    assert to_plain(parse_inline(text)) == text


def test_parser_remembers_failed_openers():
    parser = InlineParser(tokenize("*a *b"))
    parser.parse()
    assert parser._failed == {0, 2}


def test_merge_text_joins_neighbours_recursively():
    nodes = [Text("a"), Text(""), Text("b"), Emphasis([Text("c"), Text("d")]), Text("e")]
    assert _merge_text(nodes) == [Text("ab"), Emphasis([Text("cd")]), Text("e")]


class TestToPlain:
    def test_it_drops_markup_and_link_targets(self):
        assert to_plain(parse_inline("**Bold** `code` and [a *link*](http://x)")) == "Bold code and a link"

    def test_it_rejects_foreign_objects(self):
        with pytest.raises(TypeError, match="not an inline node: str"):
            to_plain(["text"])
