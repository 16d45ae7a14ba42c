"""What the model is shown: module choice, the context, the prompts and the feedback."""

from __future__ import annotations

import json

from tests.support.llm_server import (  # noqa: F401 (llm_server_fixture registers the fixture)
    Reply,
    llm_server_fixture,
)
from workers.sandbox.types import EnvironmentSpec, Snapshot
from workers.synthesis.llm import LLMConfig, synthesize_llm
from workers.synthesis.llm_context import (
    build_context,
    candidate_modules,
    feedback_message,
    module_order,
    related_tests,
    system_prompt,
    task_request,
)
from workers.synthesis.llm_schema import PROPOSAL_SCHEMA
from workers.synthesis.source import SourceTree


def test_candidates_are_source_modules_with_functions(shop_files):
    tree = SourceTree(files=shop_files)
    # errors.py defines no function, __init__.py is empty, tests are never extended.
    assert candidate_modules(tree) == ["shop/cart.py", "shop/pricing.py"]


def test_the_module_order_depends_only_on_the_seed(shop_files):
    tree = SourceTree(files=shop_files)
    assert module_order(tree, 3) == module_order(SourceTree(files=dict(shop_files)), 3)
    orders = {tuple(module_order(tree, seed)) for seed in range(20)}
    assert orders == {("shop/cart.py", "shop/pricing.py"), ("shop/pricing.py", "shop/cart.py")}


def test_related_tests_are_the_ones_that_import_the_module(shop_files):
    tree = SourceTree(files=shop_files)
    assert related_tests(tree, "shop/pricing.py") == ["tests/test_pricing.py"]
    assert related_tests(tree, "shop/cart.py") == ["tests/test_cart.py"]
    assert related_tests(tree, "shop/errors.py") == ["tests/test_pricing.py"]


def test_the_context_shows_tree_module_tests_and_coverage(shop_files, shop_analysis):
    tree, _table, _graph, cmap = shop_analysis
    files = [*sorted(shop_files), "README.md", "pyproject.toml"]
    context = build_context(tree=tree, files=files, module_path="shop/pricing.py", coverage=cmap)
    text = context.text
    assert context.module_name == "shop.pricing"
    assert context.test_paths == ("tests/test_pricing.py",)
    assert "## Repository files (9)" in text and "pyproject.toml" in text
    assert shop_files["shop/pricing.py"].rstrip() in text
    assert shop_files["tests/test_pricing.py"].rstrip() in text
    assert "shop/cart.py" in text  # in the tree, though its source is not shown
    assert "class Cart" not in text
    assert "- `net_price`: 7 passing test(s), e.g. `tests/test_cart.py::TestCart::test_close`" in (
        text
    )
    assert text.endswith(
        "Propose one new task that extends `shop/pricing.py` (import name "
        "`shop.pricing`). The feature may touch other source files when it "
        "needs to."
    )


def test_the_context_says_when_nothing_tests_the_module():
    tree = SourceTree(files={"pkg/lonely.py": "def alone():\n    return 1\n" * 20})
    context = build_context(tree=tree, files=["pkg/lonely.py"], module_path="pkg/lonely.py")
    assert "No existing test file imports this module." in context.text


def test_a_file_with_fences_cannot_close_the_block():
    source = 'DOC = """\n```python\nx = 1\n```\n"""\n\n\ndef f():\n    return DOC\n' * 10
    tree = SourceTree(files={"pkg/doc.py": source})
    text = build_context(tree=tree, files=["pkg/doc.py"], module_path="pkg/doc.py").text
    assert "````python\n" in text


def test_the_system_prompt_carries_the_schema_and_the_rules():
    prompt = system_prompt()
    assert json.dumps(PROPOSAL_SCHEMA, indent=1) in prompt
    assert "error-handling" in prompt
    assert "import cleanly on the CURRENT code" in prompt


def test_later_tasks_are_asked_to_differ(shop_files):
    tree = SourceTree(files=shop_files)
    context = build_context(tree=tree, files=list(shop_files), module_path="shop/cart.py")
    assert task_request(context, []) == context.text
    assert "- Cart totals with coupons" in task_request(context, ["Cart totals with coupons"])


def test_feedback_lists_every_problem():
    message = feedback_message(2, "schema-invalid", ["$.title: is empty", "$.specs: missing"])
    assert message.startswith("Round 2 failed: your answer does not match the schema")
    assert "- $.title: is empty\n- $.specs: missing" in message
    assert "answer with the complete JSON object again" in message


def test_without_a_module_the_seed_picks_one_per_task(llm_server, shop_files, bare_repo):
    git_dir, commit = bare_repo(shop_files)
    llm_server.enqueue(Reply.text("no idea"), Reply.text("none either"))
    config = LLMConfig(base_url=llm_server.base_url, model="m", max_retries=0)
    outcome = synthesize_llm(
        snapshot=Snapshot(git_dir, commit),
        environment=EnvironmentSpec(),
        runner=lambda request: None,  # never reached: no answer parses
        config=config,
        count=2,
        seed=5,
        rounds=1,
    )
    expected = module_order(SourceTree(files=shop_files), 5)
    assert [a.module for a in outcome.attempts] == expected
    for request, module in zip(llm_server.chat_requests, expected, strict=True):
        assert f"extends `{module}`" in request.last_user_message
