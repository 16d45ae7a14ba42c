import textwrap

from workers.synthesis.callgraph import build_call_graph
from workers.synthesis.functions import build_function_table
from workers.synthesis.source import SourceTree, is_test_path

SAMPLE = textwrap.dedent(
    '''\
    import functools


    def plain(x):
        y = x + 1
        return y


    @functools.lru_cache(maxsize=None)
    @staticmethod
    def decorated(
        a,
        b: int = 2,  # the default
    ) -> int:
        """Add things.

        More words.
        """
        # how it works
        total = a + b
        return total


    class Box:
        """A box."""

        def __init__(self, size):
            self.size = size
            self.items = []

        async def fetch(self, key):
            value = await self.load(key)
            if value is None:
                raise KeyError(f"missing {key!r}")
            return value

        def nested(self):
            def inner(v):
                raise ValueError("inner")
            return [inner(i) for i in range(self.size)]

        def declared(self):
            """Only a docstring."""

        def abstract(self):
            raise NotImplementedError

        def one_liner(self): return 1
    '''
)


def table_for(files):
    return build_function_table(SourceTree(files=files))


def test_it_records_ranges_signature_and_docstring():
    table = table_for({"pkg/mod.py": SAMPLE, "pkg/__init__.py": ""})
    info = table.functions["pkg/mod.py::decorated"]
    assert (info.start, info.def_line, info.signature_end, info.docstring_end, info.end) == (
        9,
        11,
        14,
        18,
        21,
    )
    assert info.body_start == 19
    assert info.signature == "def decorated(a, b: int = 2) -> int"
    assert info.docstring.startswith("Add things.")
    assert info.decorators == ["functools.lru_cache(maxsize=None)", "staticmethod"]
    assert info.module == "pkg.mod"
    assert info.statements == 2
    assert not info.declaration and not info.single_line


def test_it_finds_methods_async_nested_and_declarations():
    table = table_for({"pkg/mod.py": SAMPLE})
    fetch = table.functions["pkg/mod.py::Box.fetch"]
    assert fetch.is_async and fetch.class_name == "Box"
    assert [(r.exception, r.message, r.condition) for r in fetch.raises] == [
        ("KeyError", "missing {key!r}", "value is None")
    ]
    assert table.functions["pkg/mod.py::Box.nested.inner"].nested
    # A nested function's raise belongs to the body that stubbing removes with it.
    assert [r.exception for r in table.functions["pkg/mod.py::Box.nested"].raises] == ["ValueError"]
    assert table.functions["pkg/mod.py::Box.declared"].declaration
    assert table.functions["pkg/mod.py::Box.abstract"].declaration
    assert table.functions["pkg/mod.py::Box.one_liner"].single_line


def test_module_names_follow_packages_in_src_layout():
    tree = SourceTree(
        files={"src/ledger/__init__.py": "", "src/ledger/stock.py": "", "tool.py": "", "a/b.py": ""}
    )
    assert tree.module_name("src/ledger/stock.py") == "ledger.stock"
    assert tree.module_name("src/ledger/__init__.py") == "ledger"
    assert tree.module_name("tool.py") == "tool"
    assert tree.module_name("a/b.py") == "b"


def test_test_code_is_recognised_and_left_out(shop_files):
    for path in (
        "tests/test_a.py",
        "pkg/tests/helpers.py",
        "conftest.py",
        "x_test.py",
        "test_b.py",
    ):
        assert is_test_path(path), path
    assert not is_test_path("pkg/contest.py")
    table = table_for(shop_files)
    assert all(not f.path.startswith("tests/") for f in table.functions.values())


def test_call_graph_resolves_imports_self_and_constructors(shop_files):
    table = table_for(shop_files)
    graph = build_call_graph(table)
    assert "shop/pricing.py::net_price" in graph.callees["shop/pricing.py::gross_price"]
    assert "shop/pricing.py::gross_price" in graph.callees["shop/pricing.py::discounted"]
    # `pricing.gross_price(...)` through the imported module
    assert "shop/pricing.py::gross_price" in graph.callees["shop/cart.py::Cart.total"]
    # `self.total()` through the class
    assert "shop/cart.py::Cart.total" in graph.callees["shop/cart.py::Cart.close"]
    assert graph.is_exact("shop/cart.py::Cart.close", "shop/cart.py::Cart.total")
    assert "shop/cart.py::Cart.close" in graph.callers["shop/cart.py::Cart.total"]


def test_call_graph_follows_reexports_and_constructors():
    files = {
        "pkg/__init__.py": "from pkg.core import make\n",
        "pkg/core.py": textwrap.dedent(
            """\
            class Thing:
                def __init__(self, n):
                    self.n = n
                    self.m = n


            def make(n):
                thing = Thing(n)
                return thing
            """
        ),
        "pkg/use.py": "import pkg\n\n\ndef build():\n    x = pkg.make(1)\n    return x\n",
    }
    graph = build_call_graph(table_for(files))
    assert graph.callees["pkg/core.py::make"] == {"pkg/core.py::Thing.__init__"}
    assert graph.callees["pkg/use.py::build"] == {"pkg/core.py::make"}
