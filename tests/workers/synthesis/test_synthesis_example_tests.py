"""A function nothing calls by name is shown at work through the public call that reaches it."""

from __future__ import annotations

import textwrap

from workers.sandbox import types as sandbox
from workers.synthesis.briefs import borrow_examples, build_briefs
from workers.synthesis.callgraph import build_call_graph
from workers.synthesis.coverage_map import build_coverage_map
from workers.synthesis.example_tests import (
    enough_tests,
    hold_out_example_tests,
    show_held_examples,
)
from workers.synthesis.examples import TestSources
from workers.synthesis.functions import build_function_table
from workers.synthesis.source import SourceTree
from workers.synthesis.statement import problem_statement

# `_render_list` and `_render_str` are dispatched through `getattr`: no call graph edge, no
# test, docstring or docs page names them. Only coverage says which tests run them.
RENDER = textwrap.dedent(
    """\
    class Renderer:
        def _render_list(self, node):
            items = [str(x) for x in node]
            return ", ".join(items)

        def _render_str(self, node):
            text = str(node)
            return text.upper()

        def run(self, node):
            method = getattr(self, "_render_" + type(node).__name__)
            return method(node)


    def render(node):
        renderer = Renderer()
        return renderer.run(node)
    """
)
TESTS = textwrap.dedent(
    """\
    from pkg.render import render


    def shout(text):
        return render(text)


    def test_list():
        assert render([1, 2]) == "1, 2"


    def test_list_empty():
        assert render([]) == ""


    def test_text():
        assert shout("ab") == "AB"


    def test_text_short():
        assert shout("x") == "X"


    def test_text_spaces():
        assert shout("a b") == "A B"
    """
)
LIST_LINES = [3, 4, 11, 12, 16, 17]
STR_LINES = [7, 8, 11, 12, 16, 17]
LIST_HELPER = "pkg/render.py::Renderer._render_list"
STR_HELPER = "pkg/render.py::Renderer._render_str"


def render_project():
    files = {"pkg/__init__.py": "", "pkg/render.py": RENDER, "tests/test_render.py": TESTS}
    runs = {
        "tests/test_render.py::test_list": {"pkg/render.py": LIST_LINES},
        "tests/test_render.py::test_list_empty": {"pkg/render.py": LIST_LINES},
        "tests/test_render.py::test_text": {"pkg/render.py": STR_LINES},
        "tests/test_render.py::test_text_short": {"pkg/render.py": STR_LINES},
        "tests/test_render.py::test_text_spaces": {"pkg/render.py": STR_LINES},
    }
    return (*analyse(files, runs), sorted(runs))


def analyse(files: dict[str, str], runs: dict[str, dict[str, list[int]]]):
    """Tree, function table, call graph and coverage map of a small project whose tests
    (`runs`: test -> path -> lines run) all pass."""
    tree = SourceTree(files=files)
    table = build_function_table(tree)
    results = {t: sandbox.TestResult(t, sandbox.Outcome.PASSED) for t in runs}
    return tree, table, build_call_graph(table), build_coverage_map(table, runs, results)


def hold_out(tree, table, graph, cmap, functions, fail_to_pass):
    return hold_out_example_tests(
        functions=functions,
        fail_to_pass=fail_to_pass,
        tree=tree,
        table=table,
        graph=graph,
        cmap=cmap,
        tests=TestSources({p: tree.files[p] for p in tree.test_paths}),
    )


def held_out_for(helpers: list[str]):
    tree, table, graph, cmap, fail_to_pass = render_project()
    functions = [table.functions[fid] for fid in helpers]
    held = hold_out(tree, table, graph, cmap, functions, fail_to_pass)
    return tree, table, graph, functions, fail_to_pass, held


def test_a_helper_dispatched_by_getattr_is_shown_through_the_public_call_that_runs_it():
    _, table, graph, _, fail_to_pass, held = held_out_for([LIST_HELPER, STR_HELPER])
    assert table.functions["pkg/render.py::render"] and not graph.callers.get(LIST_HELPER)
    test_function, cases, example = held[LIST_HELPER]
    assert (test_function, cases) == (
        "tests/test_render.py::test_list_empty",
        ["tests/test_render.py::test_list_empty"],
    )
    assert (example.code, example.via) == ('assert render([]) == ""', "render")
    # The test calls `render` through a helper of its own: its assert still shows that call.
    test_function, _, example = held[STR_HELPER]
    assert test_function == "tests/test_render.py::test_text_short"
    assert (example.code, example.via) == ('assert shout("x") == "X"', "render")
    left = set(fail_to_pass) - {case for _, cases, _ in held.values() for case in cases}
    assert enough_tests(sorted(left))


def test_the_statement_says_the_helper_runs_in_the_test_of_the_public_call():
    tree, table, graph, functions, fail_to_pass, held = held_out_for([LIST_HELPER, STR_HELPER])
    kept = {case for _, cases, _ in held.values() for case in cases}
    hidden = [t for t in fail_to_pass if t not in kept]
    briefs = build_briefs(
        functions=functions,
        texts=tree.files,
        tree=tree,
        table=table,
        graph=graph,
        hidden=set(hidden),
    )
    show_held_examples(briefs, held)
    borrow_examples(briefs, table, graph, tree.docs)
    text = problem_statement(
        functions=functions, briefs=briefs, specs=[], relations=[], removed_lines=[]
    )
    examples = text.split("## Examples", 1)[1].split("## Constraints", 1)[0]
    # `getattr` dispatch: no resolved call leads from `render` to the helpers, only coverage
    # says the test runs them, and the statement says no more than that.
    assert (
        "`Renderer._render_list` runs in this test, which calls `render` (visible test, from "
        "tests/test_render.py::test_list_empty (kept visible, not a hidden test)):"
    ) in examples
    assert 'assert render([]) == ""' in examples
    assert "`Renderer._render_str` runs in this test, which calls `render`" in examples
    assert "No example outside the hidden tests" not in examples
    for nodeid in hidden:  # the hidden tests' asserts are never examples
        test_line = TESTS.split(f"def {nodeid.rsplit('::', 1)[1]}():\n", 1)[1].splitlines()[0]
        assert test_line.strip() not in examples


def test_a_test_kept_visible_for_one_function_serves_a_helper_it_also_runs():
    files = {
        "pkg/__init__.py": "",
        "pkg/text.py": textwrap.dedent(
            """\
            def _strip(s):
                s = s.strip()
                return s


            HANDLERS = {"strip": _strip}


            def clean(s):
                handler = HANDLERS["strip"]
                return handler(s).lower()
            """
        ),
        "tests/test_text.py": textwrap.dedent(
            """\
            from pkg.text import clean


            def test_clean():
                assert clean(" A ") == "a"


            def test_clean_inner():
                assert clean(" A b ") == "a b"


            def test_clean_lower():
                assert clean("AB") == "ab"


            def test_clean_tabs():
                assert clean("\\tX") == "x"
            """
        ),
    }
    lines = [2, 3, 10, 11]
    runs = {
        f"tests/test_text.py::{name}": {"pkg/text.py": lines}
        for name in ("test_clean", "test_clean_inner", "test_clean_lower", "test_clean_tabs")
    }
    tree, table, graph, cmap = analyse(files, runs)
    functions = [table.functions["pkg/text.py::clean"], table.functions["pkg/text.py::_strip"]]
    held = hold_out(tree, table, graph, cmap, functions, sorted(runs))
    # `clean` keeps a test visible as its own example; `_strip`, wired in through a dict, is
    # shown through that same test (coverage saw it run `_strip`): no second test is held out.
    assert held["pkg/text.py::_strip"][:2] == held["pkg/text.py::clean"][:2]
    assert held["pkg/text.py::_strip"][2].via == "clean"


def test_the_only_hidden_test_that_runs_two_functions_of_the_task_is_not_given_away():
    tree, table, graph, cmap, fail_to_pass = render_project()
    # Say `test_list_empty` (the shortest example) also ran `_render_str`: it is then the one
    # hidden test that needs both helpers, and another test shows `_render_list` instead.
    runs = {t: {"pkg/render.py": STR_LINES if "text" in t else LIST_LINES} for t in fail_to_pass}
    runs["tests/test_render.py::test_list_empty"] = {"pkg/render.py": LIST_LINES + STR_LINES}
    results = {t: sandbox.TestResult(t, sandbox.Outcome.PASSED) for t in runs}
    cmap = build_coverage_map(table, runs, results)
    functions = [table.functions[LIST_HELPER], table.functions[STR_HELPER]]
    held = hold_out(tree, table, graph, cmap, functions, fail_to_pass)
    assert held[LIST_HELPER][0] == "tests/test_render.py::test_list"
    kept = {case for _, cases, _ in held.values() for case in cases}
    assert "tests/test_render.py::test_list_empty" not in kept


def test_a_test_function_is_held_out_with_all_its_hidden_cases():
    # Hidden tests leave the repository a test function at a time: a case kept as an example
    # while a sibling case stays hidden would be removed with it.
    from workers.synthesis.example_tests import _test_functions

    remaining = {"tests/t.py::test_f[a]", "tests/t.py::test_f[b]", "tests/t.py::test_g"}
    assert _test_functions({"tests/t.py::test_f[a]"}, remaining) == {
        "tests/t.py::test_f": ["tests/t.py::test_f[a]", "tests/t.py::test_f[b]"]
    }


def statement_examples(files: dict[str, str], runs: dict[str, dict[str, list[int]]], names):
    tree, table, graph, cmap = analyse(files, runs)
    functions = [table.functions[n] for n in names]
    held = hold_out(tree, table, graph, cmap, functions, sorted(runs))
    kept = {case for _, cases, _ in held.values() for case in cases}
    briefs = build_briefs(
        functions=functions,
        texts=tree.files,
        tree=tree,
        table=table,
        graph=graph,
        hidden={t for t in runs if t not in kept},
    )
    show_held_examples(briefs, held)
    text = problem_statement(
        functions=functions, briefs=briefs, specs=[], relations=[], removed_lines=[]
    )
    return text.split("## Examples", 1)[1].split("## Constraints", 1)[0]


def test_only_a_resolved_call_is_said_to_reach_the_function():
    # cachetools: the statement said `RRCache.__init__` "is reached through
    # `Cache.__delitem__`" because the kept test ran both; its setup built the cache
    # through a class attribute (`self.Cache(...)`), as `new` does here.
    files = {
        "pkg/__init__.py": "",
        "pkg/box.py": textwrap.dedent(
            """\
            def _norm(key):
                key = str(key)
                return key.lower()


            class Box:
                def __init__(self, size):
                    self.size = size
                    self.items = {}

                def put(self, key, value):
                    self.items[_norm(key)] = value
                    return len(self.items)
            """
        ),
        "tests/test_box.py": textwrap.dedent(
            """\
            from pkg.box import Box


            def new(size):
                return Box(size)


            def test_put():
                box = new(2)
                assert box.put("A", 1) == 1


            def test_put_two():
                box = new(2)
                assert box.put("A", 1) == 1
                assert box.put("b", 2) == 2


            def test_put_same():
                box = new(3)
                box.put("A", 1)
                assert box.put("a", 2) == 1


            def test_put_many():
                box = new(4)
                assert [box.put(k, 0) for k in "abc"] == [1, 2, 3]
            """
        ),
    }
    lines = [2, 3, 8, 9, 12, 13]
    runs = {
        f"tests/test_box.py::{name}": {"pkg/box.py": lines}
        for name in ("test_put", "test_put_two", "test_put_same", "test_put_many")
    }
    examples = statement_examples(files, runs, ["pkg/box.py::Box.__init__", "pkg/box.py::_norm"])
    assert "`_norm` is reached through `Box.put`" in examples  # put calls _norm
    assert "`Box.__init__` runs in this test, which calls `Box.put`" in examples
    assert "`Box.__init__` is reached through" not in examples
