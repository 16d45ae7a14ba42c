"""A task whose answer sits next to it (a sibling repeats the body to write) is trivial."""

from __future__ import annotations

import textwrap

from workers.synthesis.trivial import check_trivial, near_copies

SHAPES = textwrap.dedent(
    """\
    class Square:
        def __init__(self, side, colour):
            self.side = side
            self.colour = colour

        def area(self):
            return self.side * self.side


    class Cube:
        def __init__(self, side, colour):
            self.side = side
            self.colour = colour

        def volume(self):
            total = self.side ** 3
            return round(total, 2)


    class Point:
        def __init__(self, x, y):
            self.x = x
            self.y = y
    """
)


def test_near_copies_are_bodies_another_function_of_the_module_repeats():
    copies = near_copies(SHAPES)
    assert copies["Cube.__init__"] == "Square.__init__"
    assert copies["Square.__init__"] == "Cube.__init__"
    # Same shape, other names: not the answer.
    assert "Point.__init__" not in copies and "Cube.volume" not in copies


def test_a_task_mostly_made_of_visible_answers_is_trivial():
    files = {"pkg/shapes.py": SHAPES}
    check = check_trivial(files, [("pkg/shapes.py", "Cube.__init__")])
    assert check.trivial and check.share == 1.0
    assert check.visible == {"pkg/shapes.py::Cube.__init__": "Square.__init__"}
    # Both copies removed: neither is visible any more.
    both = check_trivial(
        files, [("pkg/shapes.py", "Cube.__init__"), ("pkg/shapes.py", "Square.__init__")]
    )
    assert not both.trivial and both.visible == {}
    # A visible two-line body next to a real one to write: not trivial.
    mixed = check_trivial(
        files, [("pkg/shapes.py", "Cube.__init__"), ("pkg/shapes.py", "Cube.volume")]
    )
    assert not mixed.trivial and 0 < mixed.share < 0.5


def test_a_function_whose_answer_a_sibling_shows_is_no_candidate():
    from workers.sandbox import types as sandbox
    from workers.synthesis.candidates import select_candidates
    from workers.synthesis.coverage_map import build_coverage_map
    from workers.synthesis.functions import build_function_table
    from workers.synthesis.source import SourceTree

    table = build_function_table(SourceTree(files={"pkg/shapes.py": SHAPES}))
    test = "tests/t.py::test_all"
    lines = [n for f in table.functions.values() for n in f.body_lines]
    cmap = build_coverage_map(
        table,
        {test: {"pkg/shapes.py": lines}},
        {test: sandbox.TestResult(test, sandbox.Outcome.PASSED)},
    )
    copies = {f"pkg/shapes.py::{name}" for name in near_copies(SHAPES)}
    chosen, skipped = select_candidates(table, cmap, near_copies=copies)
    assert "pkg/shapes.py::Point.__init__" in chosen
    assert skipped["pkg/shapes.py::Cube.__init__"].startswith("a sibling repeats its body")
