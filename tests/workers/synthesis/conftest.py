"""Fixtures for the synthesis engine's tests: a small project, git work trees, bare repos."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest

from workers.gitstore import commit_folder

SHOP_FILES = {
    "shop/__init__.py": "",
    "shop/pricing.py": textwrap.dedent(
        '''\
        """Prices and discounts."""

        from shop.errors import PricingError

        TAX = 0.2


        def net_price(amount, quantity):
            """Price of `quantity` units before tax."""
            if quantity <= 0:
                raise PricingError("quantity must be positive")
            return round(amount * quantity, 2)


        def gross_price(amount, quantity):
            net = net_price(amount, quantity)
            tax = net * TAX
            return round(net + tax, 2)


        def discounted(amount, quantity, percent):
            """Gross price after a percentage discount."""
            if not 0 <= percent <= 100:
                raise ValueError(f"bad percent {percent!r}")
            gross = gross_price(amount, quantity)
            return round(gross * (100 - percent) / 100, 2)
        '''
    ),
    "shop/errors.py": "class PricingError(ValueError):\n    pass\n",
    "shop/cart.py": textwrap.dedent(
        '''\
        from shop import pricing


        class Cart:
            """A list of lines."""

            def __init__(self):
                self.lines = []
                self.closed = False

            def add(self, amount, quantity=1):
                if self.closed:
                    raise RuntimeError("cart is closed")
                self.lines.append((amount, quantity))
                return len(self.lines)

            def total(self):
                total = 0
                for amount, quantity in self.lines:
                    total += pricing.gross_price(amount, quantity)
                return round(total, 2)

            def close(self):
                """Close the cart and return its total."""
                self.closed = True
                return self.total()
        '''
    ),
    "tests/__init__.py": "",
    "tests/test_pricing.py": textwrap.dedent(
        """\
        import pytest

        from shop.errors import PricingError
        from shop.pricing import discounted, gross_price, net_price


        def test_net_price():
            assert net_price(2.5, 4) == 10.0


        def test_net_price_rejects_zero():
            with pytest.raises(PricingError, match="positive"):
                net_price(1, 0)


        def test_gross_price():
            assert gross_price(10, 1) == 12.0


        @pytest.mark.parametrize("percent, expected", [(0, 12.0), (50, 6.0)])
        def test_discounted(percent, expected):
            assert discounted(10, 1, percent) == expected


        def test_discount_out_of_range():
            with pytest.raises(ValueError):
                discounted(10, 1, 150)
        """
    ),
    "tests/test_cart.py": textwrap.dedent(
        """\
        import pytest

        from shop.cart import Cart


        class TestCart:
            def test_add_counts_lines(self):
                cart = Cart()
                assert cart.add(5) == 1
                assert cart.add(5, 2) == 2

            def test_total(self):
                cart = Cart()
                cart.add(10, 2)
                assert cart.total() == 24.0

            def test_close(self):
                cart = Cart()
                cart.add(10)
                assert cart.close() == 12.0
                with pytest.raises(RuntimeError):
                    cart.add(1)


        def test_empty_cart_total():
            assert Cart().total() == 0
        """
    ),
}


def write_files(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())


def read_files(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes().decode()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def git_apply(root: Path, patch: str, *, check_only: bool = False) -> subprocess.CompletedProcess:
    args = ["git", "apply", "--whitespace=nowarn"] + (["--check"] if check_only else []) + ["-"]
    return subprocess.run(args, cwd=root, input=patch.encode(), capture_output=True, check=False)


@pytest.fixture
def shop_files() -> dict[str, str]:
    return dict(SHOP_FILES)


@pytest.fixture(name="git_apply")
def git_apply_fixture():
    return git_apply


@pytest.fixture
def worktree(tmp_path):
    """Write files into a fresh git work tree and return its root."""

    def make(files: dict[str, str], name: str = "wt") -> Path:
        root = tmp_path / name
        root.mkdir()
        write_files(root, files)
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        return root

    return make


@pytest.fixture
def bare_repo(tmp_path):
    """A bare repository whose one commit holds the given files: (git_dir, commit)."""

    def make(files: dict[str, str], name: str = "repo") -> tuple[Path, str]:
        folder = tmp_path / f"{name}-src"
        folder.mkdir()
        write_files(folder, files)
        git_dir = tmp_path / f"{name}.git"
        return git_dir, commit_folder(folder, git_dir, "import")

    return make


# Which shop functions each shop test runs, as a coverage run would report it.
SHOP_TEST_FUNCTIONS = {
    "tests/test_pricing.py::test_net_price": ["shop/pricing.py::net_price"],
    "tests/test_pricing.py::test_net_price_rejects_zero": ["shop/pricing.py::net_price"],
    "tests/test_pricing.py::test_gross_price": [
        "shop/pricing.py::net_price",
        "shop/pricing.py::gross_price",
    ],
    "tests/test_pricing.py::test_discounted[0-12.0]": [
        "shop/pricing.py::net_price",
        "shop/pricing.py::gross_price",
        "shop/pricing.py::discounted",
    ],
    "tests/test_pricing.py::test_discounted[50-6.0]": [
        "shop/pricing.py::net_price",
        "shop/pricing.py::gross_price",
        "shop/pricing.py::discounted",
    ],
    "tests/test_pricing.py::test_discount_out_of_range": ["shop/pricing.py::discounted"],
    "tests/test_cart.py::TestCart::test_add_counts_lines": [
        "shop/cart.py::Cart.__init__",
        "shop/cart.py::Cart.add",
    ],
    "tests/test_cart.py::TestCart::test_total": [
        "shop/cart.py::Cart.__init__",
        "shop/cart.py::Cart.add",
        "shop/cart.py::Cart.total",
        "shop/pricing.py::net_price",
        "shop/pricing.py::gross_price",
    ],
    "tests/test_cart.py::TestCart::test_close": [
        "shop/cart.py::Cart.__init__",
        "shop/cart.py::Cart.add",
        "shop/cart.py::Cart.total",
        "shop/cart.py::Cart.close",
        "shop/pricing.py::net_price",
        "shop/pricing.py::gross_price",
    ],
    "tests/test_cart.py::test_empty_cart_total": [
        "shop/cart.py::Cart.__init__",
        "shop/cart.py::Cart.total",
    ],
}


def shop_coverage(table) -> dict[str, dict[str, list[int]]]:
    """Coverage in the sandbox's shape: every body line of every function a test runs."""
    coverage: dict[str, dict[str, list[int]]] = {}
    for test, fids in SHOP_TEST_FUNCTIONS.items():
        files = coverage.setdefault(test, {})
        for fid in fids:
            info = table.functions[fid]
            files.setdefault(info.path, []).extend(info.body_lines)
    return coverage


@pytest.fixture(name="shop_coverage")
def shop_coverage_fixture():
    """(which functions each shop test runs, coverage maker for a function table)."""
    return SHOP_TEST_FUNCTIONS, shop_coverage


@pytest.fixture
def shop_analysis(shop_files):
    """The shop project's function table, call graph and coverage map."""
    from workers.sandbox.types import Outcome, TestResult
    from workers.synthesis.callgraph import build_call_graph
    from workers.synthesis.coverage_map import build_coverage_map
    from workers.synthesis.functions import build_function_table
    from workers.synthesis.source import SourceTree

    tree = SourceTree(files=shop_files)
    table = build_function_table(tree)
    results = {t: TestResult(t, Outcome.PASSED) for t in SHOP_TEST_FUNCTIONS}
    cmap = build_coverage_map(table, shop_coverage(table), results)
    return tree, table, build_call_graph(table), cmap
