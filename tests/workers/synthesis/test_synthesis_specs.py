"""Specs are checkable requirements with the tests that check them; statements a solver can use."""

from __future__ import annotations

import textwrap

from workers.sandbox import types as sandbox
from workers.synthesis.briefs import borrow_examples, build_briefs
from workers.synthesis.callgraph import build_call_graph
from workers.synthesis.coverage_map import build_coverage_map
from workers.synthesis.difficulty import bucket_for, estimate_difficulty
from workers.synthesis.examples import TestSources
from workers.synthesis.functions import build_function_table
from workers.synthesis.source import SourceTree
from workers.synthesis.specs import build_specs
from workers.synthesis.statement import (
    leaks,
    problem_statement,
    scrub_removed_code,
    task_title,
    tidy_title,
)
from workers.synthesis.stubs import removed_body_lines

PRICING_F2P = [
    "tests/test_pricing.py::test_discount_out_of_range",
    "tests/test_pricing.py::test_discounted[0-12.0]",
    "tests/test_pricing.py::test_discounted[50-6.0]",
    "tests/test_pricing.py::test_gross_price",
    "tests/test_pricing.py::test_net_price",
    "tests/test_pricing.py::test_net_price_rejects_zero",
]
BOILERPLATE = (
    "behaves as its covering tests show",
    "keeps the interface",
    "called this way by",
    "pass unchanged",
    "keep passing",
)


def analyse(files: dict[str, str], runs: dict[str, dict[str, list[int]]], docs=None):
    """Table, call graph and coverage map of a small project; `runs`: test -> path -> lines."""
    tree = SourceTree(files=files, docs=docs or {})
    table = build_function_table(tree)
    results = {t: sandbox.TestResult(t, sandbox.Outcome.PASSED) for t in runs}
    cmap = build_coverage_map(table, runs, results)
    return tree, table, build_call_graph(table), cmap


def specs_for(tree, table, graph, cmap, names, fail_to_pass, hidden=None):
    functions = [table.functions[n] for n in names]
    briefs = build_briefs(
        functions=functions,
        texts=tree.files,
        tree=tree,
        table=table,
        graph=graph,
        hidden=set(fail_to_pass if hidden is None else hidden),
    )
    result = build_specs(
        functions=functions,
        briefs=briefs,
        texts=tree.files,
        table=table,
        graph=graph,
        cmap=cmap,
        tests=TestSources({p: tree.files[p] for p in tree.test_paths}),
        fail_to_pass=fail_to_pass,
    )
    return functions, briefs, result


def shop_runs(table, shop_coverage):
    """Coverage in which only the tests that expect an error run the raise."""
    test_functions, _ = shop_coverage
    raising = {"test_net_price_rejects_zero", "test_discount_out_of_range", "test_close"}
    runs: dict[str, dict[str, list[int]]] = {}
    for test, fids in test_functions.items():
        name = test.split("::")[-1].split("[")[0]
        for fid in fids:
            info = table.functions[fid]
            raises = {r.line for r in info.raises}
            lines = [n for n in info.body_lines if name in raising or n not in raises]
            runs.setdefault(test, {}).setdefault(info.path, []).extend(lines)
    return runs


def pricing(shop_files, shop_coverage):
    table = build_function_table(SourceTree(files=shop_files))
    tree, table, graph, cmap = analyse(shop_files, shop_runs(table, shop_coverage))
    names = [f"shop/pricing.py::{n}" for n in ("net_price", "gross_price", "discounted")]
    return (tree, table, graph, cmap), specs_for(tree, table, graph, cmap, names, PRICING_F2P)


def test_it_writes_no_boilerplate_specs(shop_files, shop_coverage):
    _, (_, _, result) = pricing(shop_files, shop_coverage)
    for spec in result.specs:
        assert not any(phrase in spec.statement for phrase in BOILERPLATE), spec.statement
    assert {s.kind for s in result.specs} <= {"functional", "error-handling"}
    assert all(s.key == f"S{i}" for i, s in enumerate(result.specs, start=1))


def test_each_spec_claims_the_tests_that_check_it(shop_files, shop_coverage):
    _, (_, _, result) = pricing(shop_files, shop_coverage)
    by_statement = {s.statement: s for s in result.specs}
    net_error = by_statement[
        "`net_price` raises `PricingError` when `quantity <= 0`, with the message "
        "'quantity must be positive'."
    ]
    assert net_error.verified_by == ["tests/test_pricing.py::test_net_price_rejects_zero"]
    assert net_error.part == "shop/pricing.py::net_price" and not net_error.owns_part
    percent_error = next(s for s in result.specs if "bad percent" in s.statement)
    assert percent_error.verified_by == ["tests/test_pricing.py::test_discount_out_of_range"]
    contracts = [s for s in result.specs if s.owns_part]
    assert [s.part for s in contracts] == [
        "shop/pricing.py::net_price",
        "shop/pricing.py::gross_price",
        "shop/pricing.py::discounted",
    ]
    assert "Price of `quantity` units before tax." in contracts[0].statement
    # One behaviour per hidden test function, its parametrised cases together.
    behaviour = next(
        s for s in result.specs if "discounted(10, 1, percent) == expected" in s.statement
    )
    assert behaviour.verified_by == [
        "tests/test_pricing.py::test_discounted[0-12.0]",
        "tests/test_pricing.py::test_discounted[50-6.0]",
    ]
    assert "`percent, expected` in `[(0, 12.0), (50, 6.0)]`" in behaviour.statement
    # Every hidden test verifies some spec.
    linked = {t for s in result.specs for t in s.verified_by}
    assert linked == set(PRICING_F2P)


def test_declared_edges_come_from_resolved_calls(shop_files, shop_coverage):
    _, (_, _, result) = pricing(shop_files, shop_coverage)
    contract = {s.part.split("::")[1]: s.key for s in result.specs if s.owns_part}
    calls = {(d.from_key, d.to_key) for d in result.dependencies if d.relation == "calls"}
    assert calls == {
        (contract["gross_price"], contract["net_price"]),
        (contract["discounted"], contract["gross_price"]),
    }
    assert all(d.evidence == "declared" for d in result.dependencies)


def test_a_builtin_sort_is_never_the_projects_sort():
    files = {
        "pkg/__init__.py": "",
        "pkg/table.py": textwrap.dedent(
            """\
            class Table:
                def sort(self, key):
                    self.rows = sorted(self.rows, key=key)
                    return self

                def first(self):
                    rows = list(self.rows)
                    rows.sort()
                    names = sorted(rows)
                    return names[0]


            def by_name(table: Table):
                table.sort(lambda r: r)
                return table.first()
            """
        ),
    }
    table = build_function_table(SourceTree(files=files))
    graph = build_call_graph(table)
    first, sort, by_name = (f"pkg/table.py::{n}" for n in ("Table.first", "Table.sort", "by_name"))
    assert sort not in graph.callees.get(first, set())  # list.sort and sorted() are built-ins
    assert graph.is_exact(by_name, sort)  # an annotated parameter resolves exactly
    assert graph.is_exact(by_name, first)


def test_statement_gives_each_function_its_contract_and_never_removed_code(
    shop_files, shop_coverage
):
    (tree, *_), (functions, briefs, result) = pricing(shop_files, shop_coverage)
    removed = removed_body_lines(tree.files["shop/pricing.py"], functions)
    text = problem_statement(
        functions=functions,
        briefs=briefs,
        specs=result.specs,
        relations=[("gross_price", "net_price"), ("discounted", "gross_price")],
        removed_lines=removed,
    )
    for needed in (
        "def net_price(amount, quantity):",
        "`shop/pricing.py`",
        "**Parameters**:",
        "- `quantity` (required)",
        "**Returns**: a value.",
        "- `PricingError` when `quantity <= 0`, message 'quantity must be positive'",
        "## Requirements",
        "## Constraints",
        "`gross_price` uses `net_price`",
    ):
        assert needed in text, needed
    assert leaks(text, removed) == []


def test_examples_come_from_docs_doctests_visible_tests_and_call_sites_never_hidden_tests():
    files = {
        "pkg/__init__.py": "",
        "pkg/text.py": textwrap.dedent(
            '''\
            def slug(s):
                """Lower-case words joined by dashes.

                >>> slug("A B")
                'a-b'
                """
                words = _clean(s).split()
                return "-".join(words)


            def _clean(s):
                s = s.strip()
                return s.lower()


            def title(s):
                cleaned = _clean(s)
                return cleaned.title()
            '''
        ),
        "tests/test_text.py": textwrap.dedent(
            """\
            from pkg.text import slug, title


            def test_slug_hidden():
                assert slug(" Hello World ") == "hello-world"


            def test_title_visible():
                assert title(" ab ") == "Ab"
            """
        ),
    }
    docs = {
        "README.md": "Use it:\n\n```python\nfrom pkg.text import slug\nslug('X Y')  # 'x-y'\n```\n"
    }
    runs = {
        "tests/test_text.py::test_slug_hidden": {"pkg/text.py": [7, 8, 12, 13]},
        "tests/test_text.py::test_title_visible": {"pkg/text.py": [12, 13, 17, 18]},
    }
    tree, table, graph, cmap = analyse(files, runs, docs)
    hidden = ["tests/test_text.py::test_slug_hidden"]
    functions, briefs, result = specs_for(
        tree, table, graph, cmap, ["pkg/text.py::slug", "pkg/text.py::_clean"], hidden
    )
    kinds = {fid: [e.kind for e in b.examples] for fid, b in briefs.items()}
    assert kinds["pkg/text.py::slug"][:2] == ["doctest", "docs"]
    # `_clean` is called by `title`, whose test stays visible, and by `title`'s call site.
    assert "call site" in kinds["pkg/text.py::_clean"]
    text = problem_statement(
        functions=functions, briefs=briefs, specs=result.specs, relations=[], removed_lines=[]
    )
    examples = text.split("## Examples", 1)[1].split("## Constraints", 1)[0]
    assert "slug('X Y')" in examples and "'a-b'" in examples
    assert "cleaned = _clean(s)" in examples
    assert 'slug(" Hello World ")' not in examples  # the hidden test is never an example


def test_a_helper_without_examples_borrows_one_through_its_caller():
    files = {
        "pkg/__init__.py": "",
        "pkg/text.py": (
            "def _clean(s):\n    s = s.strip()\n    return s.lower()\n\n\n"
            'def slug(s):\n    """Slug.\n\n    >>> slug(" A ")\n    \'a\'\n    """\n'
            "    words = _clean(s).split()\n    return '-'.join(words)\n"
        ),
        "tests/test_text.py": (
            "from pkg.text import slug\n\n\ndef test_slug():\n    assert slug('A')\n"
        ),
    }
    runs = {"tests/test_text.py::test_slug": {"pkg/text.py": [2, 3, 12, 13]}}
    tree, table, graph, cmap = analyse(files, runs)
    _, briefs, _ = specs_for(
        tree, table, graph, cmap, ["pkg/text.py::_clean", "pkg/text.py::slug"], list(runs)
    )
    assert briefs["pkg/text.py::_clean"].examples == []
    borrow_examples(briefs, table, graph)
    borrowed = briefs["pkg/text.py::_clean"].examples[0]
    assert borrowed.via == "slug" and 'slug(" A ")' in borrowed.code


def test_documented_options_and_neighbouring_docstrings_are_named():
    files = {
        "pkg/__init__.py": "",
        "pkg/cli.py": textwrap.dedent(
            '''\
            import argparse


            def bins(values):
                """Histogram bins by Sturges' rule: ceil(log2(n)) + 1 of them."""
                return len(values)


            def histogram(values):
                count = bins(values)
                return [count]


            def main(argv=None):
                parser = argparse.ArgumentParser()
                parser.add_argument("--width", type=int, default=40, help="bar width in columns")
                args = parser.parse_args(argv)
                return histogram([args.width])
            '''
        ),
        "tests/test_cli.py": textwrap.dedent(
            """\
            from pkg.cli import main


            def test_width():
                assert main(["--width", "10"]) == [1]
            """
        ),
    }
    runs = {"tests/test_cli.py::test_width": {"pkg/cli.py": [10, 11, 15, 16, 17, 18]}}
    tree, table, graph, cmap = analyse(files, runs)
    names = ["pkg/cli.py::histogram", "pkg/cli.py::main"]
    functions, briefs, result = specs_for(tree, table, graph, cmap, names, list(runs))
    option = next(s for s in result.specs if "--width" in s.statement)
    assert option.verified_by == ["tests/test_cli.py::test_width"]
    assert option.part == "pkg/cli.py::main"
    text = problem_statement(
        functions=functions, briefs=briefs, specs=result.specs, relations=[], removed_lines=[]
    )
    assert "`--width`: bar width in columns; default `40`" in text
    assert "Sturges' rule" in text  # the neighbour's docstring names the binning rule


def test_titles_never_repeat_a_name():
    files = {
        "a/__init__.py": "",
        "a/one.py": "class A:\n    def __init__(self):\n        self.x = 1\n        self.y = 2\n",
        "a/two.py": "class A:\n    def __init__(self):\n        self.x = 3\n        self.y = 4\n",
        "a/three.py": "class B:\n    def __init__(self):\n        self.z = 5\n        self.w = 6\n",
    }
    table = build_function_table(SourceTree(files=files))
    functions = [
        table.functions[f"a/{m}.py::{c}.__init__"]
        for m, c in (("one", "A"), ("two", "A"), ("three", "B"))
    ]
    title = task_title(functions)
    assert title == "Implement `a.one.A.__init__`, `a.two.A.__init__` and `B.__init__` in 3 modules"
    assert tidy_title("Implement `A.__init__`, `A.__init__` and `B.__init__` in 3 modules") == (
        "Implement `A.__init__` and `B.__init__` in 3 modules"
    )
    assert tidy_title("Add caching") == "Add caching"


def test_scrub_drops_lines_that_quote_the_body():
    text = "keep me\nleak: return round(amount * quantity, 2)\nalso kept"
    assert scrub_removed_code(text, ["return round(amount * quantity, 2)"]) == "keep me\nalso kept"


def test_difficulty_grows_with_the_work():
    small = estimate_difficulty(lines_removed=3, functions=2, tests=2, dependencies=1)
    large = estimate_difficulty(lines_removed=120, functions=4, tests=40, dependencies=5)
    assert small.bucket == "15m-1h" or small.bucket == "<15m"
    assert large.score > small.score
    assert large.bucket in ("1-4h", ">4h")
    assert [bucket_for(m) for m in (5, 30, 90, 300)] == ["<15m", "15m-1h", "1-4h", ">4h"]


def test_a_hidden_test_that_reaches_a_helper_through_a_public_call_is_its_behaviour():
    files = {
        "pkg/__init__.py": "",
        "pkg/text.py": (
            "def _clean(s):\n    s = s.strip()\n    return s.lower()\n\n\n"
            "def slug(s):\n    words = _clean(s).split()\n    return '-'.join(words)\n\n\n"
            "def title(s):\n    cleaned = _clean(s)\n    return cleaned.title()\n"
        ),
        "tests/test_text.py": (
            "from pkg.text import slug, title\n\n\n"
            "def test_slug():\n    assert slug(' A b ') == 'a-b'\n\n\n"
            "def test_title_is_capitalised():\n    assert title(' ab ') == 'Ab'\n"
        ),
    }
    runs = {
        "tests/test_text.py::test_slug": {"pkg/text.py": [2, 3, 7, 8]},
        "tests/test_text.py::test_title_is_capitalised": {"pkg/text.py": [2, 3, 12, 13]},
    }
    tree, table, graph, cmap = analyse(files, runs)
    _, _, result = specs_for(
        tree, table, graph, cmap, ["pkg/text.py::_clean", "pkg/text.py::slug"], list(runs)
    )
    behaviours = [s for s in result.specs if not s.owns_part]
    assert [(s.part.split("::")[1], s.verified_by) for s in behaviours] == [
        ("slug", ["tests/test_text.py::test_slug"]),
        ("_clean", ["tests/test_text.py::test_title_is_capitalised"]),
    ]
    assert behaviours[1].statement == (
        "Title is capitalised (a hidden test that runs `_clean` on the way): "
        "`assert title(' ab ') == 'Ab'`: this holds."
    )


def test_a_function_wired_in_rather_than_called_shows_its_use_site():
    files = {
        "pkg/__init__.py": "",
        "pkg/fmt.py": (
            "def _row(cells):\n    joined = ' & '.join(cells)\n    return joined + r' \\\\'\n\n\n"
            "FORMATS = {'latex': _row}\n"
        ),
        "tests/test_fmt.py": (
            "from pkg.fmt import FORMATS\n\n\ndef test_it():\n    assert FORMATS\n"
        ),
    }
    runs = {"tests/test_fmt.py::test_it": {"pkg/fmt.py": [2, 3]}}
    tree, table, graph, cmap = analyse(files, runs)
    _, briefs, _ = specs_for(tree, table, graph, cmap, ["pkg/fmt.py::_row"], list(runs))
    example = briefs["pkg/fmt.py::_row"].examples[0]
    assert (example.kind, example.code) == ("call site", "FORMATS = {'latex': _row}")


def test_special_methods_are_run_by_their_operators():
    tests = TestSources(
        {
            "tests/test_k.py": (
                "def test_equal():\n    assert Key(1) == Key(1)\n\n\n"
                "def test_hash():\n    assert hash(Key(1)) == hash(Key(1))\n"
            )
        }
    )
    assert tests.examples_for("tests/test_k.py::test_equal", "__eq__")[0].direct
    assert tests.examples_for("tests/test_k.py::test_hash", "__hash__")[0].direct
    assert tests.examples_for("tests/test_k.py::test_equal", "__hash__") == []


def test_contracts_claim_hidden_tests_the_coverage_run_did_not_see():
    files = {
        "pkg/__init__.py": "",
        "pkg/a.py": (
            "def f(x):\n    y = x + 1\n    return y\n\n\ndef g(x):\n    y = f(x)\n    return y\n"
        ),
        "tests/test_a.py": (
            "def test_seen():\n    assert True\n\n\ndef test_in_a_subprocess():\n    assert True\n"
        ),
    }
    runs = {"tests/test_a.py::test_seen": {"pkg/a.py": [2, 3, 7, 8]}}
    tree, table, graph, cmap = analyse(files, runs)
    hidden = ["tests/test_a.py::test_seen", "tests/test_a.py::test_in_a_subprocess"]
    _, _, result = specs_for(tree, table, graph, cmap, ["pkg/a.py::f", "pkg/a.py::g"], hidden)
    contracts = [s for s in result.specs if s.owns_part]
    assert all("tests/test_a.py::test_in_a_subprocess" in s.verified_by for s in contracts)


def test_options_of_the_command_line_that_runs_a_function_are_named():
    files = {
        "pkg/__init__.py": "",
        "pkg/stats.py": "def bins(values):\n    count = len(values)\n    return count + 1\n",
        "pkg/cli.py": textwrap.dedent(
            """\
            import argparse

            from pkg.stats import bins


            def main(argv=None):
                parser = argparse.ArgumentParser()
                parser.add_argument("--rule", choices=["sturges", "rice"], help="binning rule")
                args = parser.parse_args(argv)
                return bins([args.rule])
            """
        ),
        "tests/test_cli.py": (
            "from pkg.cli import main\n\n\ndef test_rule():\n"
            "    assert main(['--rule', 'rice']) == 2\n"
        ),
    }
    runs = {"tests/test_cli.py::test_rule": {"pkg/stats.py": [2, 3]}}
    tree, table, graph, cmap = analyse(files, runs)
    functions, briefs, result = specs_for(
        tree, table, graph, cmap, ["pkg/stats.py::bins"], list(runs)
    )
    option = next(s for s in result.specs if "--rule" in s.statement)
    assert option.verified_by == ["tests/test_cli.py::test_rule"]
    text = problem_statement(
        functions=functions, briefs=briefs, specs=result.specs, relations=[], removed_lines=[]
    )
    assert '`--rule`: binning rule; choices `["sturges", "rice"]`' in text


def test_a_constructor_is_run_by_its_subclasses_names_too():
    from workers.synthesis.briefs import called_names

    files = {
        "pkg/__init__.py": "",
        "pkg/errors.py": textwrap.dedent(
            """\
            class MarkupError(Exception):
                def __init__(self, message, line=None):
                    super().__init__(message)
                    self.line = line


            class BlockError(MarkupError):
                pass


            class TableError(BlockError):
                pass


            class OwnInit(MarkupError):
                def __init__(self):
                    super().__init__("x")
            """
        ),
    }
    table = build_function_table(SourceTree(files=files))
    info = table.functions["pkg/errors.py::MarkupError.__init__"]
    assert called_names(info, table) == ["MarkupError", "BlockError", "TableError"]


def test_an_example_that_runs_two_functions_is_shown_under_each(shop_files, shop_coverage):
    from workers.synthesis.documents import DocExample

    _, (functions, briefs, result) = pricing(shop_files, shop_coverage)
    shared = DocExample("assert gross_price(net_price(1, 1), 1) == 1.44", "README.md", "docs")
    for fid in ("shop/pricing.py::net_price", "shop/pricing.py::gross_price"):
        briefs[fid].examples = [shared]
    text = problem_statement(
        functions=functions, briefs=briefs, specs=result.specs, relations=[], removed_lines=[]
    )
    assert "`net_price` (docs, from README.md):" in text
    assert "`gross_price` (docs, from README.md):" in text


def test_a_public_call_that_raises_an_error_already_specified_is_not_a_second_spec():
    # The public `slug` hands its checks to a private helper; the hidden test that expects the
    # helper's TypeError through `slug` verifies the error-handling spec, and saying it again as
    # a behaviour would count one requirement twice. Its other hidden test is still a behaviour.
    files = {
        "pkg/__init__.py": "",
        "pkg/text.py": (
            "def _checked(s, sep):\n"
            "    if not isinstance(sep, str):\n"
            "        raise TypeError('separator must be str')\n"
            "    return s.strip().lower()\n\n\n"
            "def slug(s, sep='-'):\n    return sep.join(_checked(s, sep).split())\n"
        ),
        "tests/test_text.py": (
            "import pytest\n\nfrom pkg.text import slug\n\n\n"
            "def test_a_separator_must_be_text():\n"
            "    with pytest.raises(TypeError):\n        slug('a b', sep=None)\n\n\n"
            "def test_words_are_joined():\n    assert slug(' A b ') == 'a-b'\n"
        ),
    }
    runs = {
        "tests/test_text.py::test_a_separator_must_be_text": {"pkg/text.py": [2, 3, 8]},
        "tests/test_text.py::test_words_are_joined": {"pkg/text.py": [2, 4, 8]},
    }
    tree, table, graph, cmap = analyse(files, runs)
    _, _, result = specs_for(tree, table, graph, cmap, ["pkg/text.py::_checked"], list(runs))
    errors = [s for s in result.specs if s.kind == "error-handling"]
    assert [(s.statement, s.verified_by) for s in errors] == [
        (
            "`_checked` raises `TypeError`, with the message 'separator must be str'.",
            ["tests/test_text.py::test_a_separator_must_be_text"],
        )
    ]
    behaviours = [s for s in result.specs if not s.owns_part and s.kind == "functional"]
    assert [s.verified_by for s in behaviours] == [["tests/test_text.py::test_words_are_joined"]]
    assert not any("Separator must be text" in s.statement for s in result.specs)


def test_a_page_on_a_protocol_method_is_not_the_purpose_of_every_class_that_has_it():
    # cachetools' docs say of its base class that subclasses may override `__setitem__`; that
    # paragraph is not what `RRCache.__setitem__` does. One that names the class is.
    files = {
        "pkg/__init__.py": "",
        "pkg/cache.py": (
            "class Cache(dict):\n    pass\n\n\n"
            "class RRCache(Cache):\n"
            "    def __setitem__(self, key, value):\n        dict.__setitem__(self, key, value)\n\n"
            "    def popitem(self):\n        return dict.popitem(self)\n"
        ),
        "tests/test_cache.py": (
            "from pkg.cache import RRCache\n\n\n"
            "def test_store():\n    c = RRCache()\n    c[1] = 2\n    assert c.popitem() == (1, 2)\n"
        ),
    }
    docs = {
        "docs/index.rst": (
            "Subclasses of Cache may override `__setitem__` to track insertions.\n\n"
            "Every cache calls :meth:`popitem` to evict an item.\n\n"
            "`popitem` of an RRCache removes a random item.\n\n"
            "::\n\n    >>> c = RRCache()\n    >>> c[1] = 2\n    >>> c.popitem()\n    (1, 2)\n\n"
            "::\n\n    >>> c = RRCache()\n    >>> c[1] = 2\n\n"
        )
    }
    runs = {"tests/test_cache.py::test_store": {"pkg/cache.py": [7, 10]}}
    tree, table, graph, cmap = analyse(files, runs, docs=docs)
    names = ["pkg/cache.py::RRCache.__setitem__", "pkg/cache.py::RRCache.popitem"]
    functions, briefs, result = specs_for(tree, table, graph, cmap, names, list(runs))
    setitem, popitem = (briefs[n] for n in names)
    assert (setitem.purpose, setitem.purpose_source) == (
        "Stores `obj[key] = value` on a `RRCache`.",
        "Python's data model",
    )
    assert setitem.doc_paragraphs == []
    assert popitem.purpose == "`popitem` of an RRCache removes a random item."
    text = problem_statement(
        functions=functions, briefs=briefs, specs=result.specs, relations=[], removed_lines=[]
    )
    assert "Subclasses of Cache may override" not in text
    assert "Every cache calls" not in text  # a method named without its class
    # The shorter block is part of the longer one: only the longer is an example.
    assert [e.code for e in popitem.examples if e.kind == "docs"] == [
        ">>> c = RRCache()\n>>> c[1] = 2\n>>> c.popitem()\n(1, 2)"
    ]
    # The purpose's paragraph is said once, not again under related documentation.
    assert text.count("removes a random item") == 2  # the purpose and the contract spec


def test_a_name_that_is_also_a_word_is_found_in_docs_only_where_it_reads_as_code():
    # semantic-version's README: "Some input might not match the semantic version scheme" was
    # given as the purpose of `Range.match`.
    files = {
        "pkg/__init__.py": "",
        "pkg/ranges.py": (
            "class Range:\n    def match(self, version):\n        return version > 0\n\n\n"
            "class Version:\n    def match(self, other):\n        return other == 1\n"
        ),
        "tests/test_ranges.py": (
            "from pkg.ranges import Range\n\n\ndef test_match():\n    assert Range().match(2)\n"
        ),
    }
    docs = {
        "README.rst": (
            "Some user input might not match the semantic version scheme.\n\n"
            ":meth:`Version.match` compares two versions.\n\n"
            ":meth:`Range.match` tells whether a version lies in the range.\n"
        )
    }
    runs = {"tests/test_ranges.py::test_match": {"pkg/ranges.py": [3]}}
    tree, table, graph, cmap = analyse(files, runs, docs=docs)
    names = ["pkg/ranges.py::Range.match"]
    _, briefs, _ = specs_for(tree, table, graph, cmap, names, list(runs))
    brief = briefs["pkg/ranges.py::Range.match"]
    assert brief.purpose == ":meth:`Range.match` tells whether a version lies in the range."
    assert [text for _, text in brief.doc_paragraphs] == [brief.purpose]
