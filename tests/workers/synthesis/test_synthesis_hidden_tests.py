import ast
import textwrap

from workers.synthesis.edits import apply_edits
from workers.synthesis.hidden_tests import plan_test_removal, split_nodeid

TESTS = textwrap.dedent(
    """\
    import pytest


    def test_keep():
        assert True


    # Checks the sum.
    @pytest.mark.parametrize("x", [1, 2])
    def test_sum(x):
        assert x


    class TestBox:
        \"\"\"Box tests.\"\"\"

        def test_open(self):
            assert 1

        def test_close(self):
            assert 1


    class TestMixed:
        def test_a(self):
            assert 1

        def test_b(self):
            assert 1


    def test_last():
        assert 1
    """
)
ALL = {
    "tests/test_box.py::test_keep",
    "tests/test_box.py::test_sum[1]",
    "tests/test_box.py::test_sum[2]",
    "tests/test_box.py::TestBox::test_open",
    "tests/test_box.py::TestBox::test_close",
    "tests/test_box.py::TestMixed::test_a",
    "tests/test_box.py::TestMixed::test_b",
    "tests/test_box.py::test_last",
}


def test_split_nodeid_handles_classes_and_parameters():
    assert split_nodeid("tests/t.py::TestA::test_b[a::b c]") == ("tests/t.py", ["TestA", "test_b"])
    assert split_nodeid("t.py::test_x") == ("t.py", ["test_x"])


def test_it_removes_whole_functions_with_decorators_comments_and_emptied_classes():
    failing = [
        "tests/test_box.py::test_sum[1]",
        "tests/test_box.py::TestBox::test_open",
        "tests/test_box.py::TestBox::test_close",
        "tests/test_box.py::TestMixed::test_a",
        "tests/test_box.py::test_last",
    ]
    plan = plan_test_removal({"tests/test_box.py": TESTS}, failing, ALL)
    hidden = apply_edits(TESTS, plan.edits["tests/test_box.py"])
    ast.parse(hidden)
    assert hidden == textwrap.dedent(
        """\
        import pytest


        def test_keep():
            assert True


        class TestMixed:
            def test_b(self):
                assert 1
        """
    )
    # The other parameter of a removed function goes too, so it is not left as a visible test.
    assert "tests/test_box.py::test_sum[2]" in plan.removed
    assert "tests/test_box.py::TestMixed::test_b" not in plan.removed
    assert plan.not_found == set()


def test_a_file_whose_tests_all_fail_is_deleted():
    plan = plan_test_removal({"tests/test_box.py": TESTS}, sorted(ALL), ALL)
    assert plan.deleted == ["tests/test_box.py"]
    assert plan.removed == ALL


def test_tests_it_cannot_find_stay_and_are_reported():
    plan = plan_test_removal(
        {"tests/test_box.py": TESTS},
        ["tests/test_box.py::TestInherited::test_x", "tests/other.py::test_y"],
        ALL,
    )
    assert plan.not_found == {
        "tests/test_box.py::TestInherited::test_x",
        "tests/other.py::test_y",
    }
    assert plan.edits == {}
