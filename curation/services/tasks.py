"""Creating tasks and recording their content. Every task gets a stable, unique instance id."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Max

from curation.models import Dataset, Repository, SpecDependency, Specification, Task, TestCase
from curation.runtime import base_reader
from workers import gitstore
from workers.patchcore import PatchParseError, changed_paths
from workers.testpatch import ReadBase, patch_syntax_errors


class TaskInputError(ValueError):
    """The task as given cannot be stored; the message says what to fix."""


def instance_id_for(repository: Repository, number: int) -> str:
    return f"specloom__{repository.name}-{number}"


def _next_number(repository: Repository) -> int:
    # Lock the repository row so two creators cannot take the same number (SQLite serialises
    # writers with IMMEDIATE transactions; PostgreSQL needs the row lock).
    Repository.objects.select_for_update().filter(pk=repository.pk).first()
    current = Task.objects.filter(repository=repository).aggregate(n=Max("number"))["n"] or 0
    return current + 1


def _check_patch(name: str, patch: str, *, required: bool) -> None:
    if not patch.strip():
        if required:
            raise TaskInputError(f"the {name} is empty")
        return
    try:
        if not changed_paths(patch):
            raise TaskInputError(f"the {name} changes no file")
    except PatchParseError as exc:
        raise TaskInputError(f"the {name} is not a valid unified diff: {exc}") from None


def statement_problem(text: str) -> str:
    """Why a problem statement cannot be a task's ("" when it can): empty, or over the limit.

    The same rule refuses it at every save (web, API, admin) and refuses to approve a task
    that still carries one (tasks stored before the rule existed).
    """
    if not (text or "").strip():
        return "the problem statement is empty"
    limit = settings.SPECLOOM_STATEMENT_MAX_BYTES
    size = len(text.encode("utf-8"))
    if size > limit:
        return (
            f"the problem statement is {size:,} bytes; the limit is {limit:,} bytes "
            "(SPECLOOM_STATEMENT_MAX_BYTES)"
        )
    return ""


def check_statement(text: str) -> None:
    problem = statement_problem(text)
    if problem:
        raise TaskInputError(problem)


def task_allocate_identity(*, task: Task) -> None:
    """Give a new task (not yet saved) its number and instance id, and resolve its commit."""
    try:
        task.base_commit = gitstore.resolve_commit(
            task.repository.git_dir, task.base_commit or task.repository.default_commit
        )
    except gitstore.UnknownCommit:
        raise TaskInputError(
            f"commit {task.base_commit!r} does not exist in {task.repository.name}"
        ) from None
    task.number = _next_number(task.repository)
    task.instance_id = instance_id_for(task.repository, task.number)


def check_patches(
    *, reference_patch: str, test_patch: str, read_base: ReadBase | None = None
) -> None:
    """Both patches are unified diffs that change files, and every Python file they leave
    behind compiles (the file, line and error say where it does not)."""
    _check_patch("reference patch", reference_patch, required=True)
    _check_patch("test patch", test_patch, required=False)
    for name, patch in (("reference patch", reference_patch), ("test patch", test_patch)):
        if not patch.strip():
            continue
        errors = patch_syntax_errors(patch, read_base)
        if errors:
            more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
            raise TaskInputError(f"the {name} does not compile: {'; '.join(errors[:3])}{more}")


@transaction.atomic
def task_create(
    *,
    repository: Repository,
    dataset: Dataset,
    title: str,
    problem_statement: str,
    base_commit: str | None = None,
    reference_patch: str,
    test_patch: str,
    specs: Iterable[dict[str, Any]] = (),
    tests: Iterable[dict[str, Any]] = (),
    dependencies: Iterable[dict[str, Any]] = (),
    origin: str = Task.Origin.MANUAL,
    difficulty: str = "",
    difficulty_score: float | None = None,
    metadata: dict[str, Any] | None = None,
    synthesis_job=None,
    user=None,
) -> Task:
    """Store a task with its specs, tests and declared dependencies, as a draft.

    `specs`: {key, kind, statement, rationale?, part?, owns_part?}; `tests`: {nodeid,
    intended_role, specs: [keys], code?}; `dependencies`: {from, to, relation?, detail?}
    between spec keys. The tests' spec links are what the author claims; validation keeps those
    its runs bear out (workers.linkage).
    """
    if not title.strip():
        raise TaskInputError("the title is empty")
    try:
        commit = gitstore.resolve_commit(
            repository.git_dir, base_commit or repository.default_commit
        )
    except gitstore.UnknownCommit:
        raise TaskInputError(
            f"commit {base_commit!r} does not exist in {repository.name}"
        ) from None
    check_statement(problem_statement)
    check_patches(
        reference_patch=reference_patch,
        test_patch=test_patch,
        read_base=base_reader(repository, commit),
    )

    number = _next_number(repository)
    task = Task.objects.create(
        repository=repository,
        dataset=dataset,
        number=number,
        instance_id=instance_id_for(repository, number),
        base_commit=commit,
        title=title.strip()[:300],
        problem_statement=problem_statement,
        origin=origin,
        difficulty=difficulty,
        difficulty_score=difficulty_score,
        reference_patch=reference_patch,
        test_patch=test_patch,
        metadata=metadata or {},
        synthesis_job=synthesis_job,
        created_by=user if getattr(user, "is_authenticated", False) else None,
    )
    specs_by_key = task_replace_specs(task=task, specs=specs, dependencies=dependencies)
    seen: set[str] = set()
    for entry in tests:
        nodeid = entry["nodeid"]
        if nodeid in seen:
            raise TaskInputError(f"test {nodeid!r} is listed twice")
        seen.add(nodeid)
        role = entry.get("intended_role", TestCase.Intent.FAIL_TO_PASS)
        if role not in TestCase.Intent.values:
            raise TaskInputError(
                f"test {nodeid!r}: intended role must be FAIL_TO_PASS or PASS_TO_PASS"
            )
        test = TestCase.objects.create(
            task=task, nodeid=nodeid, intended_role=role, code=entry.get("code", "")
        )
        unknown = [k for k in entry.get("specs", []) if k not in specs_by_key]
        if unknown:
            raise TaskInputError(f"test {nodeid!r} names unknown spec(s) {', '.join(unknown)}")
        test.specs.set([specs_by_key[k] for k in entry.get("specs", [])])
        for key in entry.get("specs", []):
            specs_by_key[key].claimed_tests.append(nodeid)
    Specification.objects.bulk_update(specs_by_key.values(), ["claimed_tests"])
    return task


def task_replace_specs(
    *, task: Task, specs: Iterable[dict[str, Any]], dependencies: Iterable[dict[str, Any]]
) -> dict[str, Specification]:
    specs_by_key: dict[str, Specification] = {}
    for order, entry in enumerate(specs):
        key = entry["key"]
        if key in specs_by_key:
            raise TaskInputError(f"spec key {key!r} is used twice")
        if entry.get("kind") not in Specification.Kind.values:
            raise TaskInputError(
                f"spec {key}: kind must be one of {', '.join(Specification.Kind.values)}"
            )
        if not str(entry.get("statement", "")).strip():
            raise TaskInputError(f"spec {key}: the statement is empty")
        specs_by_key[key] = Specification.objects.create(
            task=task,
            key=key,
            kind=entry["kind"],
            statement=entry["statement"],
            rationale=entry.get("rationale", ""),
            order=order,
            part=str(entry.get("part", ""))[:500],
            owns_part=bool(entry.get("owns_part", False)),
        )
    for entry in dependencies:
        source, target = entry["from"], entry["to"]
        if source not in specs_by_key or target not in specs_by_key:
            raise TaskInputError(f"dependency {source} -> {target} names an unknown spec")
        if source == target:
            raise TaskInputError(f"spec {source} cannot depend on itself")
        SpecDependency.objects.get_or_create(
            task=task,
            from_spec=specs_by_key[source],
            to_spec=specs_by_key[target],
            evidence=SpecDependency.Evidence.DECLARED,
            defaults={
                "relation": entry.get("relation", "depends-on"),
                "detail": entry.get("detail", ""),
            },
        )
    return specs_by_key
