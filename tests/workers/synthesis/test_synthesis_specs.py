from workers.synthesis.difficulty import bucket_for, estimate_difficulty
from workers.synthesis.examples import TestSources
from workers.synthesis.specs import build_specs
from workers.synthesis.statement import leaks, problem_statement, scrub_removed_code
from workers.synthesis.stubs import removed_body_lines

PRICING_F2P = [
    "tests/test_pricing.py::test_discount_out_of_range",
    "tests/test_pricing.py::test_discounted[0-12.0]",
    "tests/test_pricing.py::test_discounted[50-6.0]",
    "tests/test_pricing.py::test_gross_price",
    "tests/test_pricing.py::test_net_price",
    "tests/test_pricing.py::test_net_price_rejects_zero",
]
CART_P2P = ["tests/test_cart.py::test_empty_cart_total"]


def pricing_specs(shop_analysis):
    tree, table, graph, cmap = shop_analysis
    names = ["net_price", "gross_price", "discounted"]
    functions = [table.functions[f"shop/pricing.py::{n}"] for n in names]
    result = build_specs(
        functions=functions,
        texts=tree.files,
        table=table,
        graph=graph,
        cmap=cmap,
        tests=TestSources({p: tree.files[p] for p in tree.test_paths}),
        fail_to_pass=PRICING_F2P,
        pass_to_pass=CART_P2P,
    )
    return functions, result


def test_each_function_gets_functional_interface_and_error_specs(shop_analysis):
    _, result = pricing_specs(shop_analysis)
    kinds = [(s.key, s.kind) for s in result.specs]
    assert kinds[:3] == [("S1", "functional"), ("S2", "functional"), ("S3", "functional")]
    by_kind = {}
    for spec in result.specs:
        by_kind.setdefault(spec.kind, []).append(spec)
    assert len(by_kind["interface"]) == 2  # net_price and gross_price have callers
    errors = by_kind["error-handling"]
    assert [e.statement for e in errors] == [
        "`net_price` raises `PricingError` when `quantity <= 0`, with the message "
        "'quantity must be positive'.",
        "`discounted` raises `ValueError` when `not 0 <= percent <= 100`, with a message of "
        "the form 'bad percent {percent!r}'.",
    ]
    # Linked through coverage of the raise line, or through pytest.raises naming the exception.
    assert "tests/test_pricing.py::test_net_price_rejects_zero" in errors[0].verified_by
    assert "tests/test_pricing.py::test_discount_out_of_range" in errors[1].verified_by
    compatibility = by_kind["compatibility"]
    assert compatibility[0].verified_by == CART_P2P
    assert "Cart.total" in compatibility[0].statement
    assert all(s.key == f"S{i}" for i, s in enumerate(result.specs, start=1))


def test_functional_specs_quote_asserts_of_covering_tests(shop_analysis):
    _, result = pricing_specs(shop_analysis)
    net = result.specs[0]
    assert "net_price(2.5, 4) == 10.0" in net.statement
    assert "Price of `quantity` units before tax." in net.statement
    assert set(net.verified_by) <= set(PRICING_F2P)
    examples = result.examples["shop/pricing.py::discounted"]
    assert any("percent, expected" in e.code for e in examples)  # parametrised values shown


def test_dependencies_follow_the_call_graph(shop_analysis):
    _, result = pricing_specs(shop_analysis)
    edges = {(d.from_key, d.to_key, d.relation) for d in result.dependencies}
    assert ("S2", "S1", "calls") in edges  # gross_price calls net_price
    assert ("S3", "S2", "calls") in edges  # discounted calls gross_price
    assert all(d.evidence == "declared" for d in result.dependencies)
    keys = {s.key for s in result.specs}
    assert all(d.from_key in keys and d.to_key in keys for d in result.dependencies)


def test_statement_is_complete_and_never_quotes_removed_code(shop_analysis):
    tree, _, _, _ = shop_analysis
    functions, result = pricing_specs(shop_analysis)
    removed = removed_body_lines(tree.files["shop/pricing.py"], functions)
    text = problem_statement(
        functions=functions,
        specs=result.specs,
        examples=result.examples,
        relations=[("gross_price", "net_price"), ("discounted", "gross_price")],
        removed_lines=removed,
    )
    for needed in (
        "def net_price(amount, quantity):",
        "`shop/pricing.py`",
        "`NotImplementedError`",
        "## Requirements",
        "## Examples",
        "## Constraints",
        "**S4**",
        "`gross_price` uses `net_price`",
    ):
        assert needed in text, needed
    assert leaks(text, removed) == []
    for line in removed:
        if len(line) >= 12:
            assert line not in text


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


def test_helpers_get_examples_through_their_public_callers():
    from workers.sandbox import types as sandbox
    from workers.synthesis.callgraph import build_call_graph
    from workers.synthesis.coverage_map import build_coverage_map
    from workers.synthesis.functions import build_function_table
    from workers.synthesis.source import SourceTree

    files = {
        "pkg/__init__.py": "",
        "pkg/text.py": (
            "def _clean(s):\n    s = s.strip()\n    return s.lower()\n\n\n"
            "def _join(words):\n    out = '-'.join(words)\n    return out\n\n\n"
            "def slug(s):\n    words = _clean(s).split()\n    return _join(words)\n"
        ),
        "tests/test_text.py": (
            "from pkg.text import slug\n\n\ndef test_slug():\n"
            '    assert slug(" Hello World ") == "hello-world"\n'
        ),
    }
    tree = SourceTree(files=files)
    table = build_function_table(tree)
    test = "tests/test_text.py::test_slug"
    lines = [n for f in table.functions.values() for n in f.body_lines]
    cmap = build_coverage_map(
        table,
        {test: {"pkg/text.py": lines}},
        {test: sandbox.TestResult(test, sandbox.Outcome.PASSED)},
    )
    helpers = [table.functions["pkg/text.py::_clean"], table.functions["pkg/text.py::_join"]]
    result = build_specs(
        functions=helpers,
        texts=files,
        table=table,
        graph=build_call_graph(table),
        cmap=cmap,
        tests=TestSources({"tests/test_text.py": files["tests/test_text.py"]}),
        fail_to_pass=[test],
        pass_to_pass=[],
    )
    example = result.examples["pkg/text.py::_clean"][0]
    assert example.via == "slug"
    assert example.code == 'assert slug(" Hello World ") == "hello-world"'
    text = problem_statement(
        functions=helpers,
        specs=result.specs,
        examples=result.examples,
        relations=[],
        removed_lines=[],
    )
    assert "`_clean` (through `slug`):" in text
    # The same example is shown once, not once per helper.
    assert text.count('assert slug(" Hello World ")') == 1
