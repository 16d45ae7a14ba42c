"""Task records for export: plain dicts built from `.values()` queries, one batch at a time.

Tasks come from a database iterator (a server-side cursor on PostgreSQL); for every batch the
specs, dependencies, tests and optionally trajectories are fetched with one query each. Nothing
holds more than one batch, so memory stays flat however many tasks are exported, and no model
instance is ever built (that is most of the cost of a serializer).
"""

from __future__ import annotations

import gc
import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from itertools import islice
from typing import Any

import orjson
from django.db import connections
from django.db.models import CharField, Q, QuerySet
from django.db.models.functions import Cast

from curation.exports.harness import attach_harness, harness_environment
from curation.models import (
    Evaluation,
    Repository,
    SpecDependency,
    Specification,
    SpecResult,
    TestCase,
    Trajectory,
    TrajectoryStep,
)
from curation.runtime import current_recipes

DEFAULT_BATCH = 500

_TASK_FIELDS = (
    "id",
    "instance_id",
    "repository_id",
    "repository__name",
    "base_commit",
    "revision",
    "title",
    "problem_statement",
    "origin",
    "difficulty",
    "difficulty_score",
    "interaction_score",
    "trivial",
    "reference_patch",
    "test_patch",
)

# What a record says of its repository's environment, as SWE-bench names it: `upstream` (its
# `repo`, owner/name), `version` and `environment_setup_commit`.
ENVIRONMENT_KEYS = ("upstream", "version", "environment_setup_commit")
# What `content_sha256` covers: everything a solver or a grader sees of the task. Identifiers
# of rows in this database (task_id), optional extras (trajectories) and the repository's
# environment (recorded beside the content; it belongs to the repository, and changing its
# recipe does not change a task) are left out, so the same content always has the same
# digest, in any database.
NOT_CONTENT = ("task_id", "content_sha256", "trajectories", *ENVIRONMENT_KEYS)

# Hosts whose URLs name a project as <owner>/<name> (GitLab may nest groups: the last two).
_FORGE_URL = re.compile(
    r"^(?:[a-z+]+://(?:[^@/]*@)?|[\w.-]+@)(?P<host>[\w.-]+)(?::\d+)?[:/]+"
    r"(?P<path>[\w.-]+(?:/[\w.-]+)+?)(?:\.git)?/*$",
    re.IGNORECASE,
)
_FORGE_HOSTS = ("github", "gitlab", "bitbucket", "codeberg", "gitea", "forgejo", "sr.ht")


def upstream_from_url(url: str) -> str | None:
    """owner/name from a GitHub/GitLab-like forge URL (credentials dropped), else None."""
    match = _FORGE_URL.match(url.strip())
    if not match or not any(forge in match.group("host").lower() for forge in _FORGE_HOSTS):
        return None
    parts = match.group("path").split("/")
    return f"{parts[-2]}/{parts[-1].removesuffix('.git')}"


def upstream_name(repository: Repository) -> str:
    """SWE-bench's `repo` for a repository: owner/name.

    Its `upstream` field when set (the import fills it from a forge URL; a curator may change
    it); else the owner/name in the URL it was imported from, when that is a GitHub/GitLab-like
    forge URL; else `specloom/<name>`.
    """
    if repository.upstream.strip():
        return repository.upstream.strip()
    if repository.source_kind == Repository.SourceKind.GIT:
        from_url = upstream_from_url(repository.source)
        if from_url:
            return from_url
    return f"specloom/{repository.name}"


_UNKNOWN = object()


def environment_version(repository: Repository, *, recipe=_UNKNOWN) -> str:
    """SWE-bench's `version` for a repository's tasks: the name of its environment.

    The curator's `environment_version` when set; else `env-` and a short, stable digest of the
    environment recipe the sandbox builds from (its notes left out), so that tasks share a
    version exactly when they share an environment; a repository without a recipe yet digests
    its setup fields.
    """
    if repository.environment_version.strip():
        return repository.environment_version.strip()
    if recipe is _UNKNOWN:
        recipe = _recipe_of(repository)
    if recipe is not None and recipe.recipe:
        spec = {key: value for key, value in recipe.recipe.items() if key != "notes"}
    else:
        spec = {
            "setup_command": repository.setup_command,
            "requirements": list(repository.environment.get("requirements", [])),
        }
    return "env-" + hashlib.sha256(canonical_json(spec)).hexdigest()[:12]


def _recipe_of(repository: Repository):
    from curation.models import EnvironmentRecipe

    return (
        EnvironmentRecipe.objects.filter(repository=repository, commit=repository.default_commit)
        .only("recipe", "commit")
        .first()
    )


def environment_setup_commit(repository: Repository, *, recipe=_UNKNOWN) -> str:
    """SWE-bench's `environment_setup_commit`: the commit the environment is built from (the
    snapshot its recipe was made for: the repository's default commit), whatever a task's
    base commit is."""
    if recipe is _UNKNOWN:
        recipe = _recipe_of(repository)
    return recipe.commit if recipe is not None else repository.default_commit


def _environments(
    repository_ids: Iterable[int],
    known: dict[int, dict[str, str]],
    harness: dict | None = None,
) -> None:
    """Fill `known` with the environment keys of the repositories not in it yet (and `harness`
    with their harness environments, from the same two queries)."""
    missing = set(repository_ids) - set(known)
    if not missing:
        return
    repositories = list(Repository.objects.filter(pk__in=missing))
    recipes = current_recipes(repositories)
    for repository in repositories:
        recipe = recipes.get(repository.pk)
        if harness is not None:
            harness[repository.name] = harness_environment(repository, recipe_row=recipe)
        known[repository.pk] = {
            "upstream": upstream_name(repository),
            "version": environment_version(repository, recipe=recipe),
            "environment_setup_commit": environment_setup_commit(repository, recipe=recipe),
        }


@dataclass(frozen=True)
class ExportOptions:
    trajectories: bool = False
    include_unsafe: bool = False
    batch_size: int = DEFAULT_BATCH


@dataclass
class ExportCounts:
    """What an export left out, for the datasheet (filled in while records are produced)."""

    tasks: int = 0
    trajectories: int = 0
    unsafe_left_out: int = 0


def canonical_json(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def content_sha256(record: dict[str, Any]) -> str:
    content = {key: value for key, value in record.items() if key not in NOT_CONTENT}
    return hashlib.sha256(canonical_json(content)).hexdigest()


def effective_role(role: str, intended_role: str) -> str:
    """A validated role wins; a test never validated counts with the role it was written for."""
    return intended_role if role == TestCase.Role.UNVALIDATED else role


def _batched(iterable: Iterable, size: int) -> Iterator[list]:
    iterator = iter(iterable)
    while batch := list(islice(iterator, size)):
        yield batch


_STAMP = re.compile(
    r"^(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?([+-]\d\d(?::?\d\d)?)?$"
)


def _iso_text(value: str | None) -> str | None:
    """`datetime.isoformat()` of a UTC timestamp, from the database's own text of it:
    PostgreSQL writes `2026-01-02 03:04:05.6+00`, SQLite `2026-01-02 03:04:05.600000` (UTC,
    no offset). Reading text skips Django's pure-Python timestamp loader, a tenth of the
    export's time; the result is the same string on every database."""
    if value is None:
        return None
    match = _STAMP.match(value)
    if match is None:
        return value  # a shape we do not know: as the database wrote it
    date, clock, fraction, offset = match.groups()
    fraction = (fraction or "").ljust(6, "0")
    fraction = "" if fraction == "000000" else f".{fraction}"
    if not offset:
        offset = "+00:00"
    elif len(offset) == 3:
        offset += ":00"
    elif ":" not in offset:
        offset = f"{offset[:3]}:{offset[3:]}"
    return f"{date}T{clock}{fraction}{offset}"


class TaskRecord(dict):
    """A record that also holds its content as canonical JSON (sorted keys), already encoded
    for its digest, so that writing it out does not encode it a second time. Read-only."""

    # `harness`: the repository's environment for the SWE-bench harness fields (exports/harness).
    __slots__ = ("content_json", "harness")


def _number(value):
    return str(value) if isinstance(value, Decimal) else value


def _among(field: str, ids: list[int]) -> Q:
    """Rows whose `field` is one of `ids` (not empty). A batch read in id order is nearly
    contiguous, and then a range is far cheaper than `IN (500 parameters)`: Django builds and
    psycopg converts every parameter, which cost more than the query itself. Rows of ids in the
    range but not in the batch are dropped by the caller."""
    low, high = min(ids), max(ids)
    if high - low < 2 * len(ids):
        return Q(**{f"{field}__gte": low, f"{field}__lte": high})
    return Q(**{f"{field}__in": ids})


def _rows(queryset: QuerySet) -> list[tuple]:
    """All rows of a `values_list` query of plain columns (ints, text), in one fetch.

    Django would fetch them 100 at a time and pass each row through its converters; these
    columns need none, and on the export's hot path that bookkeeping cost more than the query.
    """
    sql, params = queryset.query.get_compiler(using=queryset.db).as_sql()
    with connections[queryset.db].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _specs_of(task_ids: list[int]) -> tuple[dict[int, list[dict]], dict[int, tuple[int, str]]]:
    by_task: dict[int, list[dict]] = defaultdict(list)
    keys: dict[int, tuple[int, str]] = {}
    wanted = set(task_ids)
    rows = _rows(
        Specification.objects.filter(_among("task_id", task_ids))
        .order_by("task_id", "order", "id")
        .values_list("id", "task_id", "key", "kind", "statement", "rationale", "verified")
    )
    for spec_id, task_id, key, kind, statement, rationale, verified in rows:
        if task_id not in wanted:
            continue
        keys[spec_id] = (task_id, key)
        # `verified`: a FAIL_TO_PASS test verifies it; unverified specs are never counted.
        by_task[task_id].append(
            {
                "key": key,
                "kind": kind,
                "statement": statement,
                "rationale": rationale,
                "verified": bool(verified),
            }
        )
    return by_task, keys


def _key_in_task(keys: dict[int, tuple[int, str]], spec_id: int, task_id: int) -> str:
    owner, key = keys.get(spec_id, (None, ""))
    return key if owner == task_id else ""


def _dependencies_of(
    task_ids: list[int], keys: dict[int, tuple[int, str]]
) -> dict[int, list[dict]]:
    by_task: dict[int, list[dict]] = defaultdict(list)
    wanted = set(task_ids)
    rows = _rows(
        SpecDependency.objects.filter(_among("task_id", task_ids))
        .order_by("task_id", "id")
        .values_list("task_id", "from_spec_id", "to_spec_id", "relation", "evidence", "detail")
    )
    for task_id, source, target, relation, evidence, detail in rows:
        if task_id not in wanted:
            continue
        by_task[task_id].append(
            {
                "from": _key_in_task(keys, source, task_id),
                "to": _key_in_task(keys, target, task_id),
                "relation": relation,
                "evidence": evidence,
                "detail": detail,
            }
        )
    for edges in by_task.values():
        edges.sort(key=_edge_order)
    return by_task


def _edge_order(edge: dict) -> tuple[str, str, str, str]:
    return (edge["from"], edge["to"], edge["evidence"], edge["relation"])


def _tests_of(task_ids: list[int], keys: dict[int, tuple[int, str]]) -> dict[int, list[dict]]:
    spec_order = {spec_id: position for position, spec_id in enumerate(keys)}
    wanted = set(task_ids)
    rows = [
        row
        for row in _rows(
            TestCase.objects.filter(_among("task_id", task_ids))
            .order_by("task_id", "id")
            .values_list("id", "task_id", "nodeid", "intended_role", "role")
        )
        if row[1] in wanted
    ]
    test_ids = sorted(row[0] for row in rows)
    verified: dict[int, list[int]] = defaultdict(list)
    if test_ids:
        links = _rows(
            TestCase.specs.through.objects.filter(_among("testcase_id", test_ids)).values_list(
                "testcase_id", "specification_id"
            )
        )
        task_of_test = {row[0]: row[1] for row in rows}
        for test_id, spec_id in links:
            owner = keys.get(spec_id)
            if owner is not None and owner[0] == task_of_test.get(test_id):
                verified[test_id].append(spec_id)
    by_task: dict[int, list[dict]] = defaultdict(list)
    for test_id, task_id, nodeid, intended_role, role in rows:
        specs = verified.get(test_id)
        if not specs:
            names = []
        elif len(specs) == 1:
            names = [keys[specs[0]][1]]
        else:
            names = [keys[s][1] for s in sorted(specs, key=spec_order.__getitem__)]
        by_task[task_id].append(
            {"nodeid": nodeid, "intended_role": intended_role, "role": role, "specs": names}
        )
    return by_task


def _related_in_python(task_ids: list[int]) -> tuple[dict, dict, dict]:
    """Specs, dependencies and tests of a batch, by task id.

    Tried and measured (bench/export.py): having PostgreSQL build these lists as JSON
    (json_agg) cuts this process's CPU by a quarter but costs the server more than it saves,
    and a prefetch thread on a second connection gains nothing on two cores; both left out.
    """
    specs, keys = _specs_of(task_ids)
    return specs, _dependencies_of(task_ids, keys), _tests_of(task_ids, keys)


def _trajectories_of(
    task_ids: list[int], *, include_unsafe: bool, counts: ExportCounts
) -> dict[int, list[dict]]:
    by_task: dict[int, list[dict]] = defaultdict(list)
    queryset = Trajectory.objects.filter(task_id__in=task_ids).order_by(
        "task_id", "model_name", "id"
    )
    unsafe = Trajectory.objects.filter(task_id__in=task_ids, unsafe=True)
    if not include_unsafe:
        counts.unsafe_left_out += unsafe.count()
        queryset = queryset.filter(unsafe=False)
    rows = list(
        queryset.values(
            "id",
            "task_id",
            "model_name",
            "scaffold",
            "source_format",
            "content_sha256",
            "final_patch",
            "exit_status",
            "tokens_in",
            "tokens_out",
            "cost_usd",
            "step_count",
            "unsafe",
            "metadata",
        )
    )
    if not rows:
        return by_task
    ids = [row["id"] for row in rows]
    steps: dict[int, list[dict]] = defaultdict(list)
    for step in (
        TrajectoryStep.objects.filter(trajectory_id__in=ids)
        .order_by("trajectory_id", "index")
        .values("trajectory_id", *TrajectoryStep.CONTENT_FIELDS)
    ):
        steps[step.pop("trajectory_id")].append(step)
    evaluations = {
        row["trajectory_id"]: row
        for row in Evaluation.objects.filter(trajectory_id__in=ids).values(
            "id",
            "trajectory_id",
            "task_revision",
            "patch_applied",
            "resolved",
            "test_outcomes",
            "touched_test_files",
            "flaky_tests",
        )
    }
    satisfied: dict[int, dict[str, bool]] = defaultdict(dict)
    for evaluation_id, key, ok in (
        SpecResult.objects.filter(evaluation__trajectory_id__in=ids)
        .order_by("evaluation_id", "spec__order", "spec_id")
        .values_list("evaluation_id", "spec__key", "satisfied")
    ):
        satisfied[evaluation_id][key] = ok
    for row in rows:
        evaluation = evaluations.get(row["id"])
        if evaluation is not None:
            evaluation = {
                "task_revision": evaluation["task_revision"],
                "patch_applied": evaluation["patch_applied"],
                "resolved": evaluation["resolved"],
                "test_outcomes": evaluation["test_outcomes"],
                "spec_satisfied": satisfied.get(evaluation["id"], {}),
                "touched_test_files": evaluation["touched_test_files"],
                "flaky_tests": evaluation["flaky_tests"],
            }
        task_id = row.pop("task_id")
        trajectory_id = row.pop("id")
        row["cost_usd"] = _number(row["cost_usd"])
        row["steps"] = steps.get(trajectory_id, [])
        row["evaluation"] = evaluation
        by_task[task_id].append(row)
        counts.trajectories += 1
    return by_task


def task_records(
    tasks: QuerySet,
    *,
    options: ExportOptions | None = None,
    counts: ExportCounts | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield one export record per task of `tasks`, in the queryset's order (id by default)."""
    options = options or ExportOptions()
    counts = counts if counts is not None else ExportCounts()
    if not tasks.query.order_by:
        tasks = tasks.order_by("id")
    rows = (
        tasks.values(*_TASK_FIELDS)
        .annotate(created_text=Cast("created_at", output_field=CharField()))
        .iterator(chunk_size=options.batch_size)
    )
    environments: dict[int, dict[str, str]] = {}
    harness_environments: dict = {}
    for batch in _batched(rows, options.batch_size):
        task_ids = [row["id"] for row in batch]
        _environments({row["repository_id"] for row in batch}, environments, harness_environments)
        with _collector_paused():
            specs, dependencies, tests = _related_in_python(task_ids)
            trajectories = (
                _trajectories_of(task_ids, include_unsafe=options.include_unsafe, counts=counts)
                if options.trajectories
                else None
            )
            records = [
                _record(
                    row,
                    specs=specs,
                    dependencies=dependencies,
                    tests=tests,
                    environment=environments[row["repository_id"]],
                )
                for row in batch
            ]
        attach_harness(records, harness_environments)
        for record in records:
            if trajectories is not None:
                record["trajectories"] = trajectories.get(record["task_id"], [])
            counts.tasks += 1
            yield record


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a batch is built.

    A batch allocates tens of thousands of small dicts and lists, none of them in a cycle; each
    allocation burst sets off collections that walk every live object, about a sixth of the
    export's time (bench/export.py). Only this module's own code runs in the block, and
    collection resumes (and catches up) as soon as the batch is built.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _record(
    row: dict[str, Any],
    *,
    specs: dict,
    dependencies: dict,
    tests: dict,
    environment: dict[str, str],
) -> TaskRecord:
    task_id = row["id"]
    task_tests = tests.get(task_id, [])
    fail_to_pass, pass_to_pass = [], []
    for test in task_tests:
        role = effective_role(test["role"], test["intended_role"])
        if role == TestCase.Role.FAIL_TO_PASS:
            fail_to_pass.append(test["nodeid"])
        elif role == TestCase.Role.PASS_TO_PASS:
            pass_to_pass.append(test["nodeid"])
    content = {
        "instance_id": row["instance_id"],
        "repo": row["repository__name"],
        "base_commit": row["base_commit"],
        "revision": row["revision"],
        "title": row["title"],
        "problem_statement": row["problem_statement"],
        "origin": row["origin"],
        "difficulty": row["difficulty"],
        "difficulty_score": row["difficulty_score"],
        "interaction_score": row["interaction_score"],
        "trivial": row["trivial"],
        "created_at": _iso_text(row["created_text"]),
        "reference_patch": row["reference_patch"],
        "test_patch": row["test_patch"],
        "specs": specs.get(task_id, []),
        "dependencies": dependencies.get(task_id, []),
        "tests": task_tests,
        "FAIL_TO_PASS": fail_to_pass,
        "PASS_TO_PASS": pass_to_pass,
    }
    # The digest is taken before the row's id joins the record: ids are this database's, the
    # content is the task's (NOT_CONTENT).
    content_json = orjson.dumps(content, option=orjson.OPT_SORT_KEYS)
    record = TaskRecord(instance_id=row["instance_id"], task_id=task_id)
    record.update(environment)
    record.update(content)
    record["content_sha256"] = hashlib.sha256(content_json).hexdigest()
    record.content_json = content_json
    return record
