import ast
import textwrap

from workers.synthesis.edits import apply_edits, file_patch, invert_edits, split_lines
from workers.synthesis.functions import build_function_table
from workers.synthesis.source import SourceTree
from workers.synthesis.stubs import removed_body_lines, stub_edits

SOURCE = textwrap.dedent(
    '''\
    """Module docstring."""
    import re

    PATTERN = re.compile(r"\\s+")   # odd  spacing   kept


    @register("slug")
    def slugify(text,
                sep="-"):
        """Lower-case words joined by `sep`."""
        # strip first
        words = PATTERN.split(text.strip())
        return sep.join(w.lower() for w in words)
        # trailing note about the body


    class Store:
        def __init__(self):
            self.items = {}
            self.count = 0

        async def load(self, key):
            data = await fetch(key)
            return data

        def outer(self):
            def helper(x):
                return x * 2
            return [helper(i) for i in range(3)]


    def last(x):
        y = x
        return y'''
)


def functions(text, *names):
    table = build_function_table(SourceTree(files={"m.py": text}))
    return [table.functions[f"m.py::{name}"] for name in names]


def test_stub_keeps_signature_docstring_decorators_and_other_lines():
    fns = functions(SOURCE, "slugify", "Store.load", "Store.outer")
    stubbed = apply_edits(SOURCE, stub_edits(SOURCE, fns))
    slug_body = (
        "    # strip first\n"
        "    words = PATTERN.split(text.strip())\n"
        "    return sep.join(w.lower() for w in words)\n"
        "    # trailing note about the body\n"
    )
    load_body = "        data = await fetch(key)\n        return data\n"
    outer_body = (
        "        def helper(x):\n"
        "            return x * 2\n"
        "        return [helper(i) for i in range(3)]\n"
    )
    expected = (
        SOURCE.replace(slug_body, "    raise NotImplementedError\n")
        .replace(load_body, "        raise NotImplementedError\n")
        .replace(outer_body, "        raise NotImplementedError\n")
    )
    assert expected.count("raise NotImplementedError") == 3
    assert stubbed == expected
    assert '@register("slug")\ndef slugify(text,\n            sep="-"):\n' in stubbed
    assert 'PATTERN = re.compile(r"\\s+")   # odd  spacing   kept' in stubbed
    ast.parse(stubbed)


def test_stub_without_docstring_keeps_multiline_signature_and_missing_final_newline():
    fns = functions(SOURCE, "last")
    stubbed = apply_edits(SOURCE, stub_edits(SOURCE, fns))
    assert stubbed.endswith("def last(x):\n    raise NotImplementedError")
    fns = functions(SOURCE, "slugify")
    edit = stub_edits(SOURCE, fns)[0]
    assert edit.label == "def slugify(text,"


def test_stub_keeps_crlf_line_endings():
    text = "def f(a):\r\n    b = a\r\n    return b\r\n\r\nX = 1\r\n"
    stubbed = apply_edits(text, stub_edits(text, functions(text, "f")))
    assert stubbed == "def f(a):\r\n    raise NotImplementedError\r\n\r\nX = 1\r\n"


def test_stubbed_module_still_imports_and_raises():
    namespace: dict = {"register": lambda name: lambda f: f, "fetch": None}
    stubbed = apply_edits(
        SOURCE, stub_edits(SOURCE, functions(SOURCE, "slugify", "Store.__init__"))
    )
    exec(compile(stubbed, "m.py", "exec"), namespace)  # noqa: S102 - our own fixture text
    assert namespace["slugify"].__doc__ == "Lower-case words joined by `sep`."
    try:
        namespace["slugify"]("a b")
    except NotImplementedError:
        pass
    else:
        raise AssertionError("the stub should raise")


def test_removed_lines_are_the_code_lines_of_the_bodies():
    removed = removed_body_lines(SOURCE, functions(SOURCE, "slugify"))
    assert removed == [
        "words = PATTERN.split(text.strip())",
        "return sep.join(w.lower() for w in words)",
    ]


def test_restoring_edits_round_trip():
    fns = functions(SOURCE, "slugify", "Store.__init__", "last")
    edits = stub_edits(SOURCE, fns)
    stubbed = apply_edits(SOURCE, edits)
    restore = invert_edits(split_lines(SOURCE), edits)
    assert apply_edits(stubbed, restore) == SOURCE
    assert file_patch("m.py", stubbed, restore).startswith("diff --git a/m.py b/m.py\n")
