import unittest

import pytest

from marktext import UnsafeURLError, escape_html, parse_blocks, parse_inline, render, render_block, render_inline
from marktext.blocks import CodeBlock, Heading, ListBlock, Quote, Table
from marktext.html import _render_table, _safe_url


class EscapeTest(unittest.TestCase):
    def test_escapes_markup_characters(self):
        self.assertEqual(escape_html('<a href="x">Tom & Jerry\'s</a>'), "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#x27;s&lt;/a&gt;")

    def test_quotes_can_be_left_alone(self):
        self.assertEqual(escape_html('"a" < b', quote=False), '"a" &lt; b')

    def test_ampersands_are_escaped_first(self):
        self.assertEqual(escape_html("&lt;"), "&amp;lt;")


@pytest.mark.parametrize(
    "url, expected",
    [
        ("https://example.org/a?b=1&c=2", "https://example.org/a?b=1&c=2"),
        ("  /relative/path  ", "/relative/path"),
        ("#section", "#section"),
        ("MAILTO:me@example.org", "MAILTO:me@example.org"),
        ("docs/page.html", "docs/page.html"),
    ],
)
def test_safe_url_allows_ordinary_links(url, expected):
    assert _safe_url(url) == expected


@pytest.mark.parametrize(
    "url, scheme",
    [("javascript:alert(1)", "javascript"), ("JavaScript:void(0)", "javascript"), ("java\tscript:x", "javascript"), ("data:text/html,x", "data")],
    ids=["javascript", "mixed case", "tab [inside scheme]", "data url"],
)
def test_safe_url_refuses_other_schemes(url, scheme):
    with pytest.raises(UnsafeURLError, match=f"unsafe URL scheme '{scheme}'"):
        _safe_url(url)


class TestRenderInline:
    def test_markup(self):
        nodes = parse_inline("**a** *b* `<c>` [d](https://e.org?x=1&y=\"2\")")
        assert render_inline(nodes) == (
            '<strong>a</strong> <em>b</em> <code>&lt;c&gt;</code> <a href="https://e.org?x=1&amp;y=&quot;2&quot;">d</a>'
        )

    def test_text_is_escaped(self):
        assert render_inline(parse_inline("1 < 2 & \"quotes\"")) == '1 &lt; 2 &amp; "quotes"'

    def test_unsafe_links_become_their_label(self):
        assert render_inline(parse_inline("[click *me*](javascript:alert(1))")) == "click <em>me</em>"

    def test_unsafe_links_can_raise_instead(self):
        with pytest.raises(UnsafeURLError, match="unsafe URL scheme 'javascript'"):
            render_inline(parse_inline("[x](javascript:alert(1))"), drop_unsafe_links=False)

    def test_unknown_nodes(self):
        with pytest.raises(TypeError, match="cannot render str"):
            render_inline(["raw"])


class TestRenderBlock:
    def test_heading_with_anchor(self):
        assert render_block(Heading(2, "A & B"), anchor="a-b") == '<h2 id="a-b">A &amp; B</h2>'

    def test_code_block_is_escaped_verbatim(self):
        html = render_block(CodeBlock('if a < b:\n    print("*x*")', "python"))
        assert html == '<pre><code class="language-python">if a &lt; b:\n    print("*x*")\n</code></pre>'

    def test_ordered_list_with_start(self):
        assert render_block(ListBlock(True, ["*x*", "y"], 3)) == '<ol start="3">\n<li><em>x</em></li>\n<li>y</li>\n</ol>'

    def test_quote_renders_children(self):
        assert render_block(Quote(parse_blocks("# T\n\nbody"))) == "<blockquote>\n<h1>T</h1>\n<p>body</p>\n</blockquote>"

    def test_unknown_blocks(self):
        with pytest.raises(TypeError, match="cannot render dict"):
            render_block({})


def test_render_table_alignment_and_header_only_tables():
    table = Table(["Name", "Qty"], [None, "right"], [["*a*", "1"]])
    assert _render_table(table, True) == (
        "<table>\n<thead>\n<tr>\n<th>Name</th>\n<th style=\"text-align: right\">Qty</th>\n</tr>\n</thead>\n"
        "<tbody>\n<tr>\n<td><em>a</em></td>\n<td style=\"text-align: right\">1</td>\n</tr>\n</tbody>\n</table>"
    )
    assert "<tbody>" not in _render_table(Table(["x"], [None]), True)


class TestRender:
    def test_readme_example(self):
        assert render("# Hello *world*\n\nSee [docs](https://example.org).") == (
            '<h1 id="hello-world">Hello <em>world</em></h1>\n<p>See <a href="https://example.org">docs</a>.</p>\n'
        )

    def test_duplicate_headings_get_distinct_ids(self, guide):
        html = render(guide)
        assert '<h2 id="install">Install</h2>' in html
        assert '<h2 id="install-1">Install</h2>' in html
        assert '<h2 id="usage-tips">Usage &amp; tips</h2>' in html

    def test_toc_links_match_heading_ids(self, guide):
        html = render(guide, toc=True)
        assert html.startswith('<nav class="toc">\n<ul>\n<li><a href="#getting-started">Getting started</a>\n<ul>\n')
        assert '<li><a href="#install-1">Install</a></li>' in html
        assert html.count('id="install-1"') == 1

    def test_script_tags_never_survive(self):
        html = render("<script>alert(1)</script>\n\n# <b>title</b>")
        assert "<script>" not in html and "<b>" not in html
        assert '<h1 id="b-title-b">&lt;b&gt;title&lt;/b&gt;</h1>' in html

    def test_empty_documents(self):
        assert render("") == ""
        assert render("# \n", toc=True) == '<nav class="toc">\n<ul>\n<li><a href="#section"></a></li>\n</ul>\n</nav>\n<h1 id="section"></h1>\n'


@pytest.mark.parametrize(
    "markup, expected",
    [
        ("- a\n- **b**", "<ul>\n<li>a</li>\n<li><strong>b</strong></li>\n</ul>\n"),
        ("1. x\n2. [y](javascript:z)", "<ol>\n<li>x</li>\n<li>y</li>\n</ol>\n"),
        ("| a | b |\n|---|---|\n| `<` | ü |", "<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td><code>&lt;</code></td>\n<td>ü</td>\n</tr>\n</tbody>\n</table>\n"),
        ("> [quoted](http://q.org)", '<blockquote>\n<p><a href="http://q.org">quoted</a></p>\n</blockquote>\n'),
        ("```\n<raw>\n```\n\n---", "<pre><code>&lt;raw&gt;\n</code></pre>\n<hr>\n"),
    ],
    ids=["bullet list", "ordered [unsafe link]", "table with ünïcödé", "quote with link", "code and rule"],
)
def test_render_blocks_end_to_end(markup, expected):
    assert render(markup) == expected


def test_render_toc_nests_and_escapes():
    html = render("# A & B\n## <C>\n# D", toc=True)
    assert html.split("</nav>")[0] == (
        '<nav class="toc">\n<ul>\n<li><a href="#a-b">A &amp; B</a>\n<ul>\n<li><a href="#c">&lt;C&gt;</a></li>\n</ul>\n</li>\n'
        '<li><a href="#d">D</a></li>\n</ul>\n'
    )


def test_render_can_refuse_unsafe_links():
    with pytest.raises(UnsafeURLError):
        render("ok\n\n- [x](data:text/html,hi)", drop_unsafe_links=False)
