"""Proposals a scripted model can answer with, for the marktext sample repository.

The feature is real: `word_frequencies` and `top_words` added to marktext/textutil.py, with an
error contract and a compatibility constraint, tests in a new file, and a reference patch made
against whatever textutil.py holds (so that the sample repository can evolve without breaking
these tests). The two functions land in different places of the file, so the reference has two
parts and the validator's interaction check has something to measure.
"""

from __future__ import annotations

import ast
import copy
import difflib
import textwrap
from typing import Any

MODULE = "marktext/textutil.py"
TEST_PATH = "tests/test_word_frequencies.py"

WORD_FREQUENCIES = textwrap.dedent(
    '''

    def word_frequencies(text: str) -> dict:
        """How often each word occurs, ignoring case and the punctuation around it."""
        counts: dict = {}
        for word in _split_words(text):
            key = word.strip(".,;:!?\\"'()[]«»“”").casefold()
            if any(char.isalnum() for char in key):
                counts[key] = counts.get(key, 0) + 1
        return counts
    '''
)

TOP_WORDS = textwrap.dedent(
    '''

    def top_words(text: str, n: int) -> list:
        """The ``n`` most frequent words, most frequent first, ties in alphabetical order."""
        if n < 1:
            raise ValueError("n must be at least 1")
        ranked = sorted(word_frequencies(text).items(), key=lambda item: (-item[1], item[0]))
        return ranked[:n]
    '''
)

TEST_CODE = textwrap.dedent(
    """\
    import pytest

    from marktext import textutil


    def test_word_frequencies_ignore_case_and_punctuation():
        assert textutil.word_frequencies("The cat, the hat.") == {"the": 2, "cat": 1, "hat": 1}


    def test_frequencies_add_up_to_word_count():
        text = "Hello, world - hello again!"
        assert sum(textutil.word_frequencies(text).values()) == textutil.word_count(text)


    def test_top_words_orders_by_count_then_alphabetically():
        assert textutil.top_words("b a c b a b", 2) == [("b", 3), ("a", 2)]


    def test_top_words_rejects_a_non_positive_n():
        with pytest.raises(ValueError, match="at least 1"):
            textutil.top_words("a b", 0)


    def test_word_count_is_unchanged():
        assert textutil.word_count("one two, three - four") == 4
    """
)

FAIL_TO_PASS = [
    f"{TEST_PATH}::test_word_frequencies_ignore_case_and_punctuation",
    f"{TEST_PATH}::test_frequencies_add_up_to_word_count",
    f"{TEST_PATH}::test_top_words_orders_by_count_then_alphabetically",
    f"{TEST_PATH}::test_top_words_rejects_a_non_positive_n",
]
PASS_TO_PASS = [f"{TEST_PATH}::test_word_count_is_unchanged"]


def reference_patch(textutil_source: str) -> str:
    """The feature as a git-style diff against `textutil_source`."""
    lines = textutil_source.splitlines(keepends=True)
    module = ast.parse(textutil_source)
    word_count = next(
        node
        for node in module.body
        if isinstance(node, ast.FunctionDef) and node.name == "word_count"
    )
    after = word_count.end_lineno or word_count.lineno
    new_lines = (
        lines[:after]
        + WORD_FREQUENCIES.splitlines(keepends=True)
        + lines[after:]
        + TOP_WORDS.splitlines(keepends=True)
    )
    body = "".join(
        difflib.unified_diff(lines, new_lines, fromfile=f"a/{MODULE}", tofile=f"b/{MODULE}")
    )
    return f"diff --git a/{MODULE} b/{MODULE}\n{body}"


def good_proposal(textutil_source: str) -> dict[str, Any]:
    return {
        "title": "Word frequencies and the most frequent words",
        "problem_statement": (
            "Add two functions to `marktext/textutil.py`:\n\n"
            "- `word_frequencies(text) -> dict` counts words case-insensitively, ignoring "
            "the punctuation around them; the counts add up to `word_count(text)`.\n"
            "- `top_words(text, n) -> list[tuple[str, int]]` returns the `n` most frequent "
            "words, most frequent first, ties in alphabetical order, and raises `ValueError` "
            "when `n` is smaller than 1.\n"
        ),
        "specs": [
            {
                "key": "S1",
                "kind": "functional",
                "statement": "word_frequencies counts each word case-insensitively, without "
                "surrounding punctuation.",
                "rationale": "Counting 'The' and 'the,' apart would be useless.",
            },
            {
                "key": "S2",
                "kind": "interface",
                "statement": "top_words(text, n) returns at most n (word, count) pairs, most "
                "frequent first, ties alphabetical.",
                "rationale": "Callers show the list as is; the order must be stable.",
            },
            {
                "key": "S3",
                "kind": "error-handling",
                "statement": "top_words raises ValueError('n must be at least 1') when n < 1.",
                "rationale": "An empty request is a caller bug, not an empty answer.",
            },
            {
                "key": "S4",
                "kind": "compatibility",
                "statement": "word_count is unchanged and the frequencies add up to it.",
                "rationale": "Both functions must agree on what a word is.",
            },
        ],
        "dependencies": [
            {"from": "S2", "to": "S1", "relation": "uses"},
            {"from": "S3", "to": "S2", "relation": "guards"},
            {"from": "S1", "to": "S4", "relation": "constrains"},
        ],
        "tests": {
            "path": TEST_PATH,
            "code": TEST_CODE,
            "fail_to_pass": [
                {"test": FAIL_TO_PASS[0], "specs": ["S1"]},
                {"test": FAIL_TO_PASS[1], "specs": ["S1", "S4"]},
                {"test": FAIL_TO_PASS[2], "specs": ["S1", "S2"]},
                {"test": FAIL_TO_PASS[3], "specs": ["S3"]},
            ],
            "pass_to_pass": [{"test": PASS_TO_PASS[0], "specs": ["S4"]}],
        },
        "reference_patch": reference_patch(textutil_source),
    }


def with_changes(proposal: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A deep copy with top-level fields replaced (None deletes the field)."""
    changed = copy.deepcopy(proposal)
    for key, value in changes.items():
        if value is None:
            changed.pop(key, None)
        else:
            changed[key] = value
    return changed


def with_a_misquoted_patch(proposal: dict[str, Any]) -> dict[str, Any]:
    """The good proposal with one context line of its patch changed, as models misquote."""
    lines = proposal["reference_patch"].splitlines(keepends=True)
    first_context = next(i for i, line in enumerate(lines) if line.startswith(" ") and line.strip())
    lines[first_context] = lines[first_context].rstrip("\n") + "  # misquoted\n"
    return with_changes(proposal, reference_patch="".join(lines))


def with_a_test_passing_on_base(proposal: dict[str, Any]) -> dict[str, Any]:
    """The good proposal claiming its compatibility test as FAIL_TO_PASS (it passes at base)."""
    changed = copy.deepcopy(proposal)
    changed["tests"]["fail_to_pass"].append({"test": PASS_TO_PASS[0], "specs": ["S4"]})
    changed["tests"]["pass_to_pass"] = []
    return changed
