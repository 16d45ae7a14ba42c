"""The proposal a model must answer with: its JSON schema, a checker, and the parsed value.

The schema is given to the model word for word and checked here with a small validator (the
subset of JSON Schema it uses), so the project needs no schema library. Checks a schema cannot
express (spec keys that exist, tests that live in the new test file, a reference patch that
leaves the tests alone) follow in `read_proposal`. Every problem comes back as a sentence the
model can act on, because the list is fed back to it as the next message.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from workers import pysource
from workers.synthesis.proposals import SPEC_KINDS, DependencyProposal, SpecProposal
from workers.synthesis.source import is_test_path

_MAX_ERRORS = 25

PROPOSAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": [
        "title",
        "problem_statement",
        "specs",
        "dependencies",
        "tests",
        "reference_patch",
    ],
    "properties": {
        "title": {"type": "string", "minLength": 5, "maxLength": 200},
        "problem_statement": {
            "type": "string",
            "minLength": 40,
            "description": "Markdown for the solver: what to build and where, without the code.",
        },
        "specs": {
            "type": "array",
            "minItems": 2,
            "maxItems": 12,
            "items": {
                "type": "object",
                "required": ["key", "kind", "statement", "rationale"],
                "properties": {
                    "key": {"type": "string", "pattern": "^S[0-9]+$"},
                    "kind": {"enum": list(SPEC_KINDS)},
                    "statement": {"type": "string", "minLength": 10},
                    "rationale": {"type": "string", "minLength": 1},
                },
            },
        },
        "dependencies": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["from", "to", "relation"],
                "properties": {
                    "from": {"type": "string", "pattern": "^S[0-9]+$"},
                    "to": {"type": "string", "pattern": "^S[0-9]+$"},
                    "relation": {
                        "type": "string",
                        "minLength": 1,
                        "description": "How `from` depends on `to`: uses, constrains, extends...",
                    },
                },
            },
        },
        "tests": {
            "type": "object",
            "required": ["path", "code", "fail_to_pass"],
            "properties": {
                "path": {
                    "type": "string",
                    "pattern": r"\.py$",
                    "description": "A NEW test file, relative to the repository root.",
                },
                "code": {"type": "string", "minLength": 20},
                "fail_to_pass": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 50,
                    "items": {
                        "type": "object",
                        "required": ["test", "specs"],
                        "properties": {
                            "test": {"type": "string", "minLength": 1},
                            "specs": {
                                "type": "array",
                                "minItems": 1,
                                "items": {"type": "string"},
                            },
                        },
                    },
                },
                "pass_to_pass": {
                    "type": "array",
                    "maxItems": 50,
                    "items": {
                        "type": "object",
                        "required": ["test"],
                        "properties": {
                            "test": {"type": "string", "minLength": 1},
                            "specs": {"type": "array", "items": {"type": "string"}},
                        },
                    },
                },
            },
        },
        "reference_patch": {
            "type": "string",
            "minLength": 20,
            "description": "Unified diff against the current snapshot (git diff format).",
        },
    },
}


# -- a small JSON Schema checker --------------------------------------------------------------

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "null": (type(None),),
}


def schema_errors(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """Problems of `value` against `schema`, one sentence each, with a JSON path.

    Supports the keywords PROPOSAL_SCHEMA uses: type, enum, required, properties,
    additionalProperties (false), items, min/maxItems, min/maxLength and pattern.
    """
    errors: list[str] = []
    _check(value, schema, path, errors)
    return errors[:_MAX_ERRORS]


def _check(value: Any, schema: dict[str, Any], path: str, errors: list[str]) -> None:
    if len(errors) >= _MAX_ERRORS:
        return
    expected = schema.get("type")
    if expected is not None and not _has_type(value, expected):
        errors.append(f"{path}: expected {expected}, got {_type_name(value)}")
        return
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(str(v) for v in schema["enum"])
        errors.append(f"{path}: {_shown(value)} is not one of: {allowed}")
    if isinstance(value, dict):
        for name in schema.get("required", []):
            if name not in value:
                errors.append(f"{path}: missing required field {name!r}")
        properties = schema.get("properties", {})
        for name, item in value.items():
            if name in properties:
                _check(item, properties[name], f"{path}.{name}", errors)
            elif schema.get("additionalProperties") is False:
                errors.append(f"{path}: unexpected field {name!r}")
    elif isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            errors.append(f"{path}: needs at least {schema['minItems']} item(s), got {len(value)}")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{path}: at most {schema['maxItems']} item(s), got {len(value)}")
        if "items" in schema:
            for index, item in enumerate(value):
                _check(item, schema["items"], f"{path}[{index}]", errors)
    elif isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            what = "is empty" if not value else f"is too short ({len(value)} characters)"
            errors.append(f"{path}: {what}; needs at least {schema['minLength']}")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{path}: longer than {schema['maxLength']} characters")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append(f"{path}: {_shown(value)} does not match {schema['pattern']}")


def _has_type(value: Any, expected: str | list[str]) -> bool:
    names = [expected] if isinstance(expected, str) else expected
    for name in names:
        # bool is an int to Python, never to JSON.
        if name in ("integer", "number") and isinstance(value, bool):
            continue
        if isinstance(value, _TYPES[name]):
            return True
    return False


def _type_name(value: Any) -> str:
    for name, types in _TYPES.items():
        if isinstance(value, types) and not (name != "boolean" and isinstance(value, bool)):
            return name
    return type(value).__name__


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


# -- reading a model's answer ------------------------------------------------------------------

_FENCE = re.compile(r"^```[a-zA-Z0-9_-]*\s*\n(?P<body>.*?)\n?```\s*$", re.DOTALL)


def parse_answer(text: str) -> tuple[Any, str]:
    """(value, "") for an answer that holds one JSON document, else (None, the parse error).

    Models in JSON mode still wrap answers in code fences or add a sentence around them now
    and then; the object inside is accepted, since the schema check that follows is strict.
    """
    if not text.strip():
        return None, "the answer is empty"
    candidates = [text.strip()]
    fenced = _FENCE.match(candidates[0])
    if fenced:
        candidates.append(fenced.group("body").strip())
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    errors: list[json.JSONDecodeError] = []
    for candidate in candidates:
        try:
            return json.loads(candidate), ""
        except json.JSONDecodeError as error:
            errors.append(error)
    # The error in the answer as sent is the one the model can locate.
    first_error = errors[0]
    where = first_error.doc[max(0, first_error.pos - 40) : first_error.pos + 40]
    return None, (
        f"the answer is not valid JSON: {first_error.msg} at line {first_error.lineno} "
        f"column {first_error.colno} (near {where!r})"
    )


@dataclass(frozen=True)
class TestClaim:
    """A test the proposal names, and the specs it verifies."""

    __test__ = False  # not a pytest class, despite the name

    nodeid: str
    spec_keys: tuple[str, ...]


@dataclass(frozen=True)
class ProposalDraft:
    """A proposal that passed the schema and the consistency checks; not yet validated."""

    title: str
    problem_statement: str
    specs: list[SpecProposal]
    dependencies: list[DependencyProposal]
    test_path: str
    test_code: str
    fail_to_pass: list[TestClaim]
    pass_to_pass: list[TestClaim]
    reference_patch: str

    def tests_of(self, key: str) -> list[str]:
        return [c.nodeid for c in [*self.fail_to_pass, *self.pass_to_pass] if key in c.spec_keys]


_PATCH_PATH = re.compile(r"^(?:---|\+\+\+) (?:[ab]/)?(?P<path>\S+)", re.MULTILINE)


def patch_paths(patch: str) -> set[str]:
    """Paths a unified diff names in its ---/+++ lines (tolerant of broken hunks)."""
    return {m.group("path") for m in _PATCH_PATH.finditer(patch)} - {"/dev/null", "dev/null"}


def read_proposal(
    value: Any, *, existing_paths: set[str]
) -> tuple[ProposalDraft | None, list[str]]:
    """Check a parsed answer; (draft, []) when usable, else (None, problems)."""
    errors = schema_errors(value, PROPOSAL_SCHEMA)
    if errors:
        return None, errors
    problems: list[str] = []
    specs = [
        SpecProposal(
            key=s["key"],
            kind=s["kind"],
            statement=s["statement"].strip(),
            rationale=s["rationale"].strip(),
        )
        for s in value["specs"]
    ]
    keys = [s.key for s in specs]
    for key in sorted({k for k in keys if keys.count(k) > 1}):
        problems.append(f"$.specs: the key {key} is used more than once")
    known = set(keys)

    dependencies: list[DependencyProposal] = []
    seen_edges: set[tuple[str, str]] = set()
    for index, dep in enumerate(value["dependencies"]):
        where = f"$.dependencies[{index}]"
        for end in ("from", "to"):
            if dep[end] not in known:
                problems.append(f"{where}.{end}: {dep[end]} is not a spec key")
        if dep["from"] == dep["to"]:
            problems.append(f"{where}: a spec cannot depend on itself ({dep['from']})")
        edge = (dep["from"], dep["to"])
        if edge not in seen_edges:
            seen_edges.add(edge)
            dependencies.append(DependencyProposal(dep["from"], dep["to"], dep["relation"]))

    tests = value["tests"]
    test_path = tests["path"].strip()
    problems += _test_path_problems(test_path, existing_paths)
    test_code = tests["code"] if tests["code"].endswith("\n") else tests["code"] + "\n"
    defined, syntax_problem = _test_names(test_code)
    if syntax_problem:
        problems.append(f"$.tests.code: {syntax_problem}")

    claims: dict[str, list[TestClaim]] = {"fail_to_pass": [], "pass_to_pass": []}
    nodeids: list[str] = []
    for group in ("fail_to_pass", "pass_to_pass"):
        for index, item in enumerate(tests.get(group, [])):
            where = f"$.tests.{group}[{index}]"
            nodeid = item["test"].strip()
            nodeids.append(nodeid)
            spec_keys = tuple(dict.fromkeys(k.strip() for k in item.get("specs", [])))
            for key in spec_keys:
                if key not in known:
                    problems.append(f"{where}.specs: {key} is not a spec key")
            problems += _nodeid_problems(
                where, nodeid, group, test_path, defined, syntax_problem, existing_paths
            )
            claims[group].append(TestClaim(nodeid, spec_keys))
    for nodeid in sorted({n for n in nodeids if nodeids.count(n) > 1}):
        problems.append(f"$.tests: {nodeid} is listed more than once")
    claimed = {k for group in claims.values() for c in group for k in c.spec_keys}
    for key in keys:
        if key not in claimed:
            problems.append(f"$.specs: {key} is verified by no test; name it in a test's specs")

    reference_patch = value["reference_patch"]
    if not reference_patch.endswith("\n"):
        reference_patch += "\n"
    problems += _reference_problems(reference_patch, test_path)

    if problems:
        return None, problems[:_MAX_ERRORS]
    return (
        ProposalDraft(
            title=value["title"].strip(),
            problem_statement=value["problem_statement"].strip(),
            specs=specs,
            dependencies=dependencies,
            test_path=test_path,
            test_code=test_code,
            fail_to_pass=claims["fail_to_pass"],
            pass_to_pass=claims["pass_to_pass"],
            reference_patch=reference_patch,
        ),
        [],
    )


def _test_path_problems(path: str, existing_paths: set[str]) -> list[str]:
    where = "$.tests.path"
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or "\\" in path:
        return [f"{where}: {path!r} must be a relative POSIX path inside the repository"]
    problems = []
    if path in existing_paths:
        problems.append(f"{where}: {path} already exists; the tests must go in a NEW file")
    name = pure.name
    if not (name.startswith("test_") or name.endswith("_test.py")):
        problems.append(f"{where}: pytest only collects files named test_*.py or *_test.py")
    return problems


def _test_names(code: str) -> tuple[set[str], str]:
    """("test_fn" and "TestClass::test_method" names the code defines, syntax problem)."""
    try:
        module = pysource.parse(code)
    except SyntaxError as error:
        return set(), f"does not parse: {error.msg} at line {error.lineno}"
    names: set[str] = set()
    for node in module.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.add(node.name)
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    names.add(f"{node.name}::{item.name}")
    return names, ""


def _nodeid_problems(
    where: str,
    nodeid: str,
    group: str,
    test_path: str,
    defined: set[str],
    syntax_problem: str,
    existing_paths: set[str],
) -> list[str]:
    file_part, sep, name = nodeid.partition("::")
    if not sep or not name:
        return [f"{where}.test: {nodeid!r} is not a pytest node id (path::test_name)"]
    if file_part == test_path:
        bare = name.split("[", 1)[0]  # parametrised ids carry their parameters in brackets
        if not syntax_problem and bare not in defined:
            return [f"{where}.test: the test code defines no {bare}"]
        return []
    if group == "fail_to_pass":
        return [
            f"{where}.test: {nodeid} is not in the new test file {test_path}; FAIL_TO_PASS "
            "tests must be new tests"
        ]
    if file_part not in existing_paths:
        return [f"{where}.test: {file_part} is not a file of the repository"]
    return []


def _reference_problems(patch: str, test_path: str) -> list[str]:
    where = "$.reference_patch"
    if "@@" not in patch or not patch_paths(patch):
        return [f"{where}: not a unified diff (needs ---/+++ file lines and @@ hunks)"]
    problems = []
    for path in sorted(patch_paths(patch)):
        if path == test_path:
            problems.append(f"{where}: must not touch the new test file {test_path}")
        elif is_test_path(path):
            problems.append(f"{where}: must not change test code ({path}); the solution is code")
    return problems
