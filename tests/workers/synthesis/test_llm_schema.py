"""The proposal schema, its checker, and reading a model's answer into a draft."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from tests.support.llm_proposals import (
    FAIL_TO_PASS,
    MODULE,
    PASS_TO_PASS,
    TEST_PATH,
    good_proposal,
    with_changes,
)
from workers.synthesis.llm_schema import (
    PROPOSAL_SCHEMA,
    parse_answer,
    patch_paths,
    read_proposal,
    schema_errors,
)

TEXTUTIL = (
    Path(__file__).resolve().parents[3] / "examples" / "repos" / "marktext" / MODULE
).read_text()
EXISTING = {MODULE, "marktext/__init__.py", "tests/test_textutil.py", "tests/conftest.py"}


@pytest.fixture
def proposal():
    return good_proposal(TEXTUTIL)


def problems_of(value) -> list[str]:
    draft, problems = read_proposal(value, existing_paths=EXISTING)
    assert draft is None
    return problems


def test_a_good_proposal_reads_into_a_draft(proposal):
    draft, problems = read_proposal(proposal, existing_paths=EXISTING)
    assert problems == []
    assert [s.key for s in draft.specs] == ["S1", "S2", "S3", "S4"]
    assert [(d.from_key, d.to_key, d.relation) for d in draft.dependencies] == [
        ("S2", "S1", "uses"),
        ("S3", "S2", "guards"),
        ("S1", "S4", "constrains"),
    ]
    assert [c.nodeid for c in draft.fail_to_pass] == FAIL_TO_PASS
    assert [c.nodeid for c in draft.pass_to_pass] == PASS_TO_PASS
    assert draft.tests_of("S4") == [FAIL_TO_PASS[1], PASS_TO_PASS[0]]
    assert draft.test_path == TEST_PATH


def test_the_schema_names_every_spec_kind():
    kinds = PROPOSAL_SCHEMA["properties"]["specs"]["items"]["properties"]["kind"]["enum"]
    assert kinds == [
        "functional",
        "interface",
        "error-handling",
        "security",
        "performance",
        "compatibility",
    ]
    json.dumps(PROPOSAL_SCHEMA)  # it is sent to the model as is


def test_it_agrees_with_jsonschema_where_that_is_installed(proposal):
    jsonschema = pytest.importorskip("jsonschema")
    broken = with_changes(proposal, title=7, specs=[{"key": "S1", "kind": "docs"}])
    for value in (proposal, broken):
        ours = bool(schema_errors(value, PROPOSAL_SCHEMA))
        theirs = bool(list(jsonschema.Draft202012Validator(PROPOSAL_SCHEMA).iter_errors(value)))
        assert ours == theirs


def test_missing_fields_and_bad_kinds_are_named_with_their_path(proposal):
    broken = with_changes(proposal, reference_patch=None)
    broken["specs"][1]["kind"] = "documentation"
    broken["tests"]["fail_to_pass"][0]["specs"] = []
    problems = problems_of(broken)
    assert "$: missing required field 'reference_patch'" in problems
    assert any(p.startswith('$.specs[1].kind: "documentation" is not one of') for p in problems)
    assert "$.tests.fail_to_pass[0].specs: needs at least 1 item(s), got 0" in problems


def test_wrong_types_are_reported_not_raised():
    assert schema_errors([], PROPOSAL_SCHEMA) == ["$: expected object, got array"]
    problems = schema_errors({"title": True, "specs": "S1"}, PROPOSAL_SCHEMA)
    assert "$.title: expected string, got boolean" in problems
    assert "$.specs: expected array, got string" in problems


def test_dependencies_and_tests_must_name_known_specs(proposal):
    broken = copy.deepcopy(proposal)
    broken["dependencies"].append({"from": "S9", "to": "S1", "relation": "uses"})
    broken["dependencies"].append({"from": "S2", "to": "S2", "relation": "uses"})
    broken["tests"]["fail_to_pass"][0]["specs"] = ["S7"]
    problems = problems_of(broken)
    assert "$.dependencies[3].from: S9 is not a spec key" in problems
    assert "$.dependencies[4]: a spec cannot depend on itself (S2)" in problems
    assert "$.tests.fail_to_pass[0].specs: S7 is not a spec key" in problems


def test_every_spec_needs_a_test(proposal):
    broken = copy.deepcopy(proposal)
    broken["tests"]["fail_to_pass"][3]["specs"] = ["S2"]
    assert "$.specs: S3 is verified by no test; name it in a test's specs" in problems_of(broken)


def test_the_tests_go_in_a_new_collectable_file(proposal):
    existing = copy.deepcopy(proposal)
    existing["tests"]["path"] = "tests/test_textutil.py"
    assert any("already exists" in p for p in problems_of(existing))
    uncollected = copy.deepcopy(proposal)
    uncollected["tests"]["path"] = "tests/frequencies.py"
    assert any("pytest only collects" in p for p in problems_of(uncollected))
    escaping = copy.deepcopy(proposal)
    escaping["tests"]["path"] = "../outside/test_x.py"
    assert any("relative POSIX path" in p for p in problems_of(escaping))


def test_fail_to_pass_tests_must_exist_in_the_new_file(proposal):
    broken = copy.deepcopy(proposal)
    broken["tests"]["fail_to_pass"][0]["test"] = f"{TEST_PATH}::test_not_written"
    broken["tests"]["fail_to_pass"][1]["test"] = "tests/test_textutil.py::test_justify"
    broken["tests"]["pass_to_pass"].append({"test": "tests/test_gone.py::test_x"})
    problems = problems_of(broken)
    assert "$.tests.fail_to_pass[0].test: the test code defines no test_not_written" in problems
    assert any("is not in the new test file" in p for p in problems)
    assert "$.tests.pass_to_pass[1].test: tests/test_gone.py is not a file of the repository" in (
        problems
    )


def test_parametrised_and_class_test_ids_are_understood(proposal):
    changed = copy.deepcopy(proposal)
    changed["tests"]["code"] += (
        "\n\nclass TestTop:\n    def test_one(self):\n        assert textutil.top_words('a', 1)\n"
    )
    changed["tests"]["fail_to_pass"].append(
        {"test": f"{TEST_PATH}::TestTop::test_one", "specs": ["S2"]}
    )
    changed["tests"]["fail_to_pass"][0]["test"] = FAIL_TO_PASS[0] + "[case-1]"
    _, problems = read_proposal(changed, existing_paths=EXISTING)
    assert problems == []


def test_test_code_must_parse(proposal):
    broken = copy.deepcopy(proposal)
    broken["tests"]["code"] = "def test_x(:\n    pass\n"
    assert any(p.startswith("$.tests.code: does not parse") for p in problems_of(broken))


def test_the_reference_patch_must_be_a_diff_that_leaves_tests_alone(proposal):
    assert any(
        "not a unified diff" in p
        for p in problems_of(with_changes(proposal, reference_patch="just write the function"))
    )
    touching = "--- a/tests/test_textutil.py\n+++ b/tests/test_textutil.py\n@@ -1 +1 @@\n-a\n+b\n"
    problems = problems_of(with_changes(proposal, reference_patch=touching))
    assert any("must not change test code (tests/test_textutil.py)" in p for p in problems)


def test_patch_paths_reads_headers_of_broken_hunks():
    patch = (
        "--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1,99 +1,2 @@\n x\n--- /dev/null\n+++ b/pkg/new.py\n"
    )
    assert patch_paths(patch) == {"pkg/a.py", "pkg/new.py"}


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}',
        '```json\n{"a": 1}\n```',
        'Here is the proposal:\n{"a": 1}\nHope it helps.',
    ],
)
def test_answers_with_one_json_object_parse(text):
    assert parse_answer(text) == ({"a": 1}, "")


def test_a_parse_error_says_where(proposal):
    value, error = parse_answer('{"title": "x",, "specs": []}')
    assert value is None
    assert error.startswith("the answer is not valid JSON: Expecting property name")
    assert "line 1 column 15" in error
    assert parse_answer("   ") == (None, "the answer is empty")
