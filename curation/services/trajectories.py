"""Importing agent trajectories: parsed records become Trajectory rows with their steps.

`curation.ingest` parses files (streaming JSONL); this module decides which task each record
belongs to and which model ran it, and writes records with their steps and evaluation jobs in
groups (see `_Group`: a few statements and one commit per group, a record at a time when the
database refuses something). A record that fails leaves nothing behind, the next one is
imported regardless, and a record imported before (same task, same model, same content hash)
is reported as a duplicate rather than stored twice. A model named by the importer (--model,
?model=) always overrides the one a file names.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

import orjson
from django.db import DataError, IntegrityError, connection, transaction
from django.db.models import QuerySet

from curation.ingest import (
    FORMATS,
    ParsedStep,
    ParsedTrajectory,
    RecordError,
    UnknownFormatError,
    detect_format,
    iter_records,
)
from curation.ingest.jsonio import first_significant_byte
from curation.models import Dataset, Task, Trajectory, TrajectoryStep
from curation.services.evaluation import (
    trajectories_evaluation_enqueue,
    trajectory_evaluation_enqueue,
)

# Steps go to the database in batches bounded by count and by size, so that a trajectory of
# thousands of steps with megabytes of output each never builds one enormous statement.
STEP_BATCH_ROWS = 1000
STEP_BATCH_BYTES = 8 * 1024 * 1024
# Records are written and committed in groups of at most this many records, steps or bytes
# of step text (see _Group); a group's parsed records are held in memory until written.
RECORDS_PER_COMMIT = 100
STEPS_PER_COMMIT = 20_000
BYTES_PER_COMMIT = 32 * 1024 * 1024

_MAX_COST = Decimal("999999.999999")  # Trajectory.cost_usd: 12 digits, 6 decimals
_MAX_BIGINT = 2**63 - 1


class ImportRefused(ValueError):
    """The whole import cannot start (unknown format, no task to attach to)."""


class RecordRejected(ValueError):
    """One record cannot be stored; the message says why and the import goes on."""


# A report lists at most this many record errors (those of the first lines) and counts the
# rest: a file of junk would otherwise answer with megabytes of the same message.
MAX_REPORTED_ERRORS = 100


def _error_order(error: dict[str, Any]) -> int:
    return -1 if error["line"] is None else error["line"]


@dataclass
class ImportReport:
    format: str
    # What a record's "line" is: a 1-based line of a JSONL file ("line"), a 0-based position
    # in a JSON list ("index"), or absent because the file is one record ("document").
    located_by: str = "line"
    created: list[dict[str, Any]] = field(default_factory=list)
    duplicates: list[dict[str, Any]] = field(default_factory=list)
    # The first MAX_REPORTED_ERRORS errors by line; `error_count` counts them all.
    errors: list[dict[str, Any]] = field(default_factory=list)
    error_count: int = 0
    steps: int = 0

    @property
    def created_ids(self) -> list[int]:
        return [entry["id"] for entry in self.created]

    def add_error(self, line: int | None, message: str) -> None:
        self.error_count += 1
        entry = {"line": line, "message": message}
        if len(self.errors) >= MAX_REPORTED_ERRORS:
            if _error_order(entry) >= _error_order(self.errors[-1]):
                return
            self.errors.pop()
        bisect.insort(self.errors, entry, key=_error_order)

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "located_by": self.located_by,
            "counts": {
                "created": len(self.created),
                "duplicates": len(self.duplicates),
                "errors": self.error_count,
                "steps": self.steps,
            },
            "created": self.created,
            "duplicates": self.duplicates,
            "errors": self.errors,
            "errors_omitted": self.error_count - len(self.errors),
        }


@dataclass
class _Target:
    """Where records go: one task, or the task of the record's instance id (in a dataset, or
    among all the tasks the importer may see)."""

    task: Task | None
    dataset: Dataset | None
    tasks: QuerySet[Task]
    _by_instance: dict[str, Task | None] = field(default_factory=dict)

    def task_for(self, parsed: ParsedTrajectory) -> Task:
        if self.task is not None:
            return self.task
        instance_id = parsed.instance_id
        if not instance_id:
            raise RecordRejected(
                "the record names no instance id, so it matches no task; import it with --task"
            )
        if instance_id not in self._by_instance:
            tasks = self.tasks.filter(instance_id=instance_id)
            if self.dataset is not None:
                tasks = tasks.filter(dataset=self.dataset)
            self._by_instance[instance_id] = tasks.first()
        task = self._by_instance[instance_id]
        if task is None:
            where = f" in dataset {self.dataset.name!r}" if self.dataset is not None else ""
            raise RecordRejected(f"no task with instance id {instance_id!r}{where}")
        return task


def _text(value: str | None, limit: int | None = None) -> str:
    if not value:
        return ""
    return value[:limit] if limit else value


def _cost(value: float | None) -> Decimal | None:
    if value is None:
        return None
    try:
        cost = Decimal(repr(value)).quantize(Decimal("0.000001"))
    except InvalidOperation:
        raise RecordRejected(f"cost_usd {value!r} is not a number") from None
    if not cost.is_finite() or cost < 0 or cost > _MAX_COST:
        raise RecordRejected(f"cost_usd {value!r} is out of range (0 to {_MAX_COST})")
    return cost


def _tokens(name: str, value: int | None) -> int | None:
    if value is not None and not 0 <= value <= _MAX_BIGINT:
        raise RecordRejected(f"{name} {value!r} is out of range")
    return value


def _model_name(parsed: ParsedTrajectory, override: str | None) -> str:
    """The model a record is stored under: the importer's explicit choice (--model, ?model=)
    always wins over what the file says (a replay's "replay", a placeholder, a typo)."""
    model = ((override or "").strip() or (parsed.model or "")).strip()
    if not model:
        raise RecordRejected(
            "the record names no model; name it with --model (or ?model= in the API)"
        )
    if len(model) > 200:
        raise RecordRejected(f"the model name is longer than 200 characters: {model[:60]!r}...")
    return model


def _clean_text(value: str) -> str:
    """Text PostgreSQL accepts: no NUL characters, no unpaired surrogates (from JSON escapes)."""
    if "\x00" in value:
        value = value.replace("\x00", "\ufffd")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        value = value.encode("utf-8", "replace").decode("utf-8")
    return value


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return _clean_text(value)
    if isinstance(value, dict):
        return {_clean_text(str(k)): _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _trajectory_row(
    parsed: ParsedTrajectory, *, task: Task, model: str, user, clean: bool
) -> Trajectory:
    metadata = dict(parsed.metadata)
    if parsed.instance_id and parsed.instance_id != task.instance_id:
        metadata["instance_id"] = parsed.instance_id
    if parsed.final_patch is None:
        metadata["no_final_patch"] = True
    if parsed.exit_status and len(parsed.exit_status) > 100:
        metadata["exit_status"] = parsed.exit_status
    if clean:
        metadata = _clean(metadata)
        metadata["text_replaced"] = "NUL characters or unpaired surrogates became U+FFFD"
    text = _clean_text if clean else (lambda value: value)
    return Trajectory(
        task=task,
        model_name=text(model),
        scaffold=text(_text(parsed.scaffold, 100)),
        source_format=parsed.source_format,
        content_sha256=parsed.content_sha256,
        final_patch=text(_text(parsed.final_patch)),
        exit_status=text(_text(parsed.exit_status, 100)),
        tokens_in=_tokens("tokens_in", parsed.tokens_in),
        tokens_out=_tokens("tokens_out", parsed.tokens_out),
        cost_usd=_cost(parsed.cost_usd),
        step_count=len(parsed.steps),
        metadata=metadata,
        imported_by=user if getattr(user, "is_authenticated", False) else None,
    )


def _step_row(trajectory_id: int, step: ParsedStep, clean: bool) -> TrajectoryStep:
    extra = step.extra
    if step.tokens is not None:
        extra = {**extra, "tokens": step.tokens}
    if clean:
        return TrajectoryStep(
            trajectory_id=trajectory_id,
            index=step.index,
            role=step.role,
            kind=step.kind,
            content=_clean_text(step.content or ""),
            action=_clean_text(step.action or ""),
            observation=_clean_text(step.observation or ""),
            thought=_clean_text(step.thought or ""),
            tool=_clean_text((step.tool or "")[:100]),
            timestamp=_clean_text((step.timestamp or "")[:64]),
            extra=_clean(extra),
        )
    return TrajectoryStep(
        trajectory_id=trajectory_id,
        index=step.index,
        role=step.role,
        kind=step.kind,
        content=step.content or "",
        action=step.action or "",
        observation=step.observation or "",
        thought=step.thought or "",
        tool=(step.tool or "")[:100],
        timestamp=(step.timestamp or "")[:64],
        extra=extra,
    )


def _step_batches(
    trajectory_id: int, steps: list[ParsedStep], clean: bool
) -> Iterator[list[TrajectoryStep]]:
    batch: list[TrajectoryStep] = []
    size = 0
    for step in steps:
        batch.append(_step_row(trajectory_id, step, clean))
        size += len(step.content or "") + len(step.observation or "") + len(step.action or "")
        if len(batch) >= STEP_BATCH_ROWS or size >= STEP_BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


_COPY_COLUMNS = ("trajectory_id", *TrajectoryStep.CONTENT_FIELDS, "extra")


def _copy_steps(trajectories: list[tuple[int, list[ParsedStep]]]) -> None:
    """PostgreSQL: stream the steps with COPY, several times faster than multi-row INSERTs
    (no statement to build, plan or bind per batch). Refused text raises DataError."""
    table = connection.ops.quote_name(TrajectoryStep._meta.db_table)
    columns = ", ".join(connection.ops.quote_name(name) for name in _COPY_COLUMNS)
    dumps = orjson.dumps
    with (
        connection.cursor() as cursor,
        connection.wrap_database_errors,
        cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy,
    ):
        write = copy.write_row
        for trajectory_id, steps in trajectories:
            for step in steps:
                extra = step.extra
                if step.tokens is not None:
                    extra = {**extra, "tokens": step.tokens}
                write(
                    (
                        trajectory_id,
                        step.index,
                        step.role,
                        step.kind,
                        step.content or "",
                        step.action or "",
                        step.observation or "",
                        step.thought or "",
                        (step.tool or "")[:100],
                        (step.timestamp or "")[:64],
                        dumps(extra).decode() if extra else "{}",
                    )
                )


def _insert_many_steps(
    trajectories: list[tuple[int, list[ParsedStep]]], *, clean: bool = False
) -> None:
    if not any(steps for _id, steps in trajectories):
        return
    if connection.vendor == "postgresql" and not clean:
        try:
            _copy_steps(trajectories)
            return
        except orjson.JSONEncodeError:
            pass  # an integer beyond 64 bits in `extra`: Django's encoder takes it
    for trajectory_id, steps in trajectories:
        for batch in _step_batches(trajectory_id, steps, clean):
            TrajectoryStep.objects.bulk_create(batch)


def _store(
    parsed: ParsedTrajectory, *, task: Task, model: str, user, evaluate: bool, clean: bool
) -> Trajectory:
    with transaction.atomic():
        trajectory = _trajectory_row(parsed, task=task, model=model, user=user, clean=clean)
        trajectory.save(force_insert=True)
        _insert_many_steps([(trajectory.pk, parsed.steps)], clean=clean)
        if evaluate:
            trajectory_evaluation_enqueue(trajectory=trajectory, task=task, user=user)
    return trajectory


def _existing(task: Task, model: str, content_sha256: str) -> int | None:
    return (
        Trajectory.objects.filter(task=task, model_name=model, content_sha256=content_sha256)
        .values_list("pk", flat=True)
        .first()
    )


def trajectory_import_record(
    *,
    parsed: ParsedTrajectory,
    task: Task,
    model: str,
    user=None,
    evaluate: bool = True,
) -> tuple[Trajectory | None, int | None]:
    """Store one record; returns (the new trajectory, None) or (None, the existing id)."""
    store = {"task": task, "model": model, "user": user, "evaluate": evaluate}
    try:
        return _store(parsed, **store, clean=False), None
    except IntegrityError:
        existing = _existing(task, model, parsed.content_sha256)
        if existing is not None:
            return None, existing
        raise
    except (DataError, UnicodeEncodeError):
        # NUL characters and lone surrogates (legal in JSON strings) are refused by the
        # database or its driver; store the record once more with them replaced.
        pass
    return _store(parsed, **store, clean=True), None


def trajectories_import(
    *,
    records: Iterable[ParsedTrajectory | RecordError],
    fmt: str,
    task: Task | None = None,
    dataset: Dataset | None = None,
    model: str | None = None,
    user=None,
    evaluate: bool = True,
    tasks: QuerySet[Task] | None = None,
    located_by: str = "line",
) -> ImportReport:
    """Import parsed records into `task`, or into the tasks of `dataset` by instance id, or
    (neither given) into whichever task has the record's instance id.

    `tasks` limits which tasks records may match (the tasks the importing user can see).
    """
    if task is not None and dataset is not None:
        raise ImportRefused("name a task or a dataset to import into, not both")
    target = _Target(
        task=task, dataset=dataset, tasks=tasks if tasks is not None else Task.objects.all()
    )
    report = ImportReport(format=fmt, located_by=located_by)
    group = _Group(report=report, user=user, evaluate=evaluate)
    for item in records:
        if isinstance(item, RecordError):
            report.add_error(item.line, item.message)
            continue
        try:
            group.add(item, task=target.task_for(item), model=_model_name(item, model))
        except RecordRejected as exc:
            report.add_error(item.line, str(exc))
    group.flush()
    return report


@dataclass
class _Pending:
    parsed: ParsedTrajectory
    task: Task
    model: str
    row: Trajectory  # built (and checked) when the record arrives


def _record_bytes(parsed: ParsedTrajectory) -> int:
    return sum(
        len(step.content) + len(step.observation or "") + len(step.action or "")
        for step in parsed.steps
    )


class _Group:
    """Records written together: one transaction, a few statements for the whole group.

    A commit waits for the write-ahead log to reach the disk and every statement is a round
    trip, so a group of records is written with one query for the duplicates, one INSERT of
    the trajectories, one COPY (PostgreSQL; batched INSERTs elsewhere) of all their steps and
    one INSERT of their evaluation jobs, in a savepoint. If the database refuses any of it,
    the savepoint is rolled back and the group's records are written again one by one, each
    in a savepoint of its own: good records are kept, a bad one is reported, and no record
    is ever half-written.
    """

    def __init__(self, *, report: ImportReport, user, evaluate: bool) -> None:
        self.report = report
        self.user = user
        self.evaluate = evaluate
        self.pending: list[_Pending] = []
        self.steps = 0
        self.bytes = 0

    def add(self, parsed: ParsedTrajectory, *, task: Task, model: str) -> None:
        """Queue a record for the group; RecordRejected if it cannot be stored at all."""
        row = _trajectory_row(parsed, task=task, model=model, user=self.user, clean=False)
        self.pending.append(_Pending(parsed, task, model, row))
        self.steps += len(parsed.steps)
        self.bytes += _record_bytes(parsed)
        if (
            len(self.pending) >= RECORDS_PER_COMMIT
            or self.steps >= STEPS_PER_COMMIT
            or self.bytes >= BYTES_PER_COMMIT
        ):
            self.flush()

    def flush(self) -> None:
        pending, self.pending = self.pending, []
        self.steps = self.bytes = 0
        if not pending:
            return
        outcomes: list[tuple[_Pending, Trajectory | None, int | None, str]] = []
        with transaction.atomic():
            try:
                with transaction.atomic():
                    outcomes = self._together(pending)
            except (IntegrityError, DataError, UnicodeEncodeError):
                outcomes = [self._alone(item) for item in pending]
            created = [trajectory for _item, trajectory, _dup, _error in outcomes if trajectory]
            if self.evaluate and created:
                trajectories_evaluation_enqueue(trajectories=created, user=self.user)
        for item, trajectory, existing, error in outcomes:
            self._note(item, trajectory, existing, error)

    def _together(self, pending: list[_Pending]):
        # A trajectory is (task, model, content): the same file under another model is new.
        tasks = {item.task.pk for item in pending}
        hashes = {item.parsed.content_sha256 for item in pending}
        existing = {
            (task_id, model, sha): pk
            for task_id, model, sha, pk in Trajectory.objects.filter(
                task_id__in=tasks, content_sha256__in=hashes
            ).values_list("task_id", "model_name", "content_sha256", "pk")
        }
        rows: dict[tuple[int, str, str], Trajectory] = {}
        order: list[tuple[_Pending, tuple[int, str, str]]] = []
        for item in pending:
            key = (item.task.pk, item.row.model_name, item.parsed.content_sha256)
            order.append((item, key))
            if key not in existing and key not in rows:
                rows[key] = item.row
        new = list(rows.values())
        Trajectory.objects.bulk_create(new)
        by_key = {key: row for key, row in rows.items()}
        first_of: dict[tuple[int, str, str], _Pending] = {}
        with_steps = []
        for item, key in order:
            if key in by_key and key not in first_of:
                first_of[key] = item
                with_steps.append((by_key[key].pk, item.parsed.steps))
        _insert_many_steps(with_steps)
        outcomes = []
        for item, key in order:
            if key in existing:
                outcomes.append((item, None, existing[key], ""))
            elif first_of[key] is item:
                outcomes.append((item, by_key[key], None, ""))
            else:  # the same record twice in one file
                outcomes.append((item, None, by_key[key].pk, ""))
        return outcomes

    def _alone(self, item: _Pending):
        try:
            trajectory, existing = trajectory_import_record(
                parsed=item.parsed, task=item.task, model=item.model, user=self.user, evaluate=False
            )
        except (IntegrityError, DataError, ValueError) as exc:
            return item, None, None, f"the database refused the record: {exc}"
        return item, trajectory, existing, ""

    def _note(self, item: _Pending, trajectory, existing, error: str) -> None:
        line = item.parsed.line
        if error:
            self.report.add_error(line, error)
        elif trajectory is None:
            self.report.duplicates.append({"line": line, "id": existing, "task": item.task.pk})
        else:
            self.report.steps += trajectory.step_count
            self.report.created.append(
                {
                    "id": trajectory.pk,
                    "line": line,
                    "task": item.task.pk,
                    "instance_id": item.task.instance_id,
                    "model": trajectory.model_name,
                    "steps": trajectory.step_count,
                }
            )


def trajectories_import_file(
    *,
    path: str | os.PathLike[str],
    fmt: str = "auto",
    task: Task | None = None,
    dataset: Dataset | None = None,
    model: str | None = None,
    user=None,
    evaluate: bool = True,
    tasks: QuerySet[Task] | None = None,
    name: str | None = None,
) -> ImportReport:
    """Parse a file of any supported format (streaming JSONL) and import its records.

    `name` is what messages call the file (an upload's temporary file is the server's
    business, not the uploader's); by default its file name."""
    if fmt != "auto" and fmt not in FORMATS:
        raise ImportRefused(f"unknown format {fmt!r}; expected auto or one of {', '.join(FORMATS)}")
    try:
        detected = detect_format(path, name=name) if fmt == "auto" else fmt
    except UnknownFormatError as exc:
        raise ImportRefused(str(exc)) from None
    if detected in ("swe-agent", "openhands"):
        located_by = "document"
    else:
        located_by = "index" if first_significant_byte(path) == b"[" else "line"
    return trajectories_import(
        records=iter_records(path, detected),
        located_by=located_by,
        fmt=detected,
        task=task,
        dataset=dataset,
        model=model,
        user=user,
        evaluate=evaluate,
        tasks=tasks,
    )
