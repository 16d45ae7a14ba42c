"""Edits of a task's content by people: every save is a revision, and revalidation follows.

Optimistic concurrency: the editor says which revision they saw (`expected_revision`). If
someone saved in between, nothing is written and `StaleRevision` carries what the other person
changed, so the page (or the API client) can show it and let the editor decide again.

Shared by the reviewer's workspace and the REST API. `changes` is a plain dict:

    {
      "title": str, "problem_statement": str, "reference_patch": str, "test_patch": str,
      "specs": {"S1": {"statement": str, "kind": str, "rationale": str,
                       "depends_on": ["S2", ...]}},       # declared edges out of S1
      "tests": {"<pytest node id>": {"code": str, "specs": ["S1", ...]}},
    }

Every key is optional; only what differs from the stored content counts as a change.

A test's `code` is not a copy kept for show: it is the test's definition in the hidden test
patch, and saving it rewrites that patch (workers.testpatch), which is what validation runs
and exports ship. The revision records both the code's and the patch's before and after.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.dispatch import Signal

from curation.models import SpecDependency, Specification, Task, TaskRevision
from curation.runtime import base_reader
from curation.services.tasks import TaskInputError, check_patches, check_statement
from curation.services.validation import task_validation_enqueue
from workers.patchcore import PatchParseError
from workers.testpatch import PatchEditError, replace_test, source_of_test

TEXT_FIELDS = ("title", "problem_statement", "reference_patch", "test_patch")
SPEC_FIELDS = ("statement", "kind", "rationale", "depends_on")
TEST_FIELDS = ("code", "specs")

# Sent inside the edit's transaction, after the revision is bumped. The review app listens to
# reopen review slots: reviews of an older revision no longer count towards consensus.
task_content_changed = Signal()  # kwargs: task, revision, user


class EditNotAllowed(ValueError):
    """The task is in a state where its content no longer changes (approved, released...)."""


@dataclass
class StaleRevision(Exception):
    """The editor saw `expected` but the task is at `current`; `revisions` are what changed."""

    expected: int
    current: int
    revisions: list[TaskRevision] = field(default_factory=list)

    def __str__(self) -> str:
        return (
            f"the task changed since you loaded it (you edited r{self.expected}, "
            f"it is now r{self.current})"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "expected_revision": self.expected,
            "current_revision": self.current,
            "changes": [
                {
                    "revision": rev.revision,
                    "author": rev.author.get_username() if rev.author else None,
                    "summary": rev.summary,
                    "changes": rev.changes,
                    "created_at": rev.created_at.isoformat(),
                }
                for rev in self.revisions
            ],
        }


@dataclass
class EditResult:
    task: Task
    revision: TaskRevision | None  # None when nothing differed (no new revision)
    job: Any = None  # the queued validation Job

    @property
    def changed(self) -> bool:
        return self.revision is not None


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise TaskInputError(f"{name} must be text")
    # Browsers send CRLF from a textarea; patches and statements are stored with LF.
    return value.replace("\r\n", "\n")


def _keys(value: Any, name: str) -> list[str]:
    if not isinstance(value, list | tuple) or not all(isinstance(k, str) for k in value):
        raise TaskInputError(f"{name} must be a list of spec keys")
    return sorted(dict.fromkeys(k.strip() for k in value if k.strip()))


def _spec_changes(task: Task, specs_in: Any, diff: dict, ops: list) -> None:
    if not isinstance(specs_in, dict):
        raise TaskInputError("specs must map spec keys to their fields")
    specs = {s.key: s for s in task.specs.all()}
    declared: dict[str, list[str]] = {}
    for dep in task.dependencies.filter(evidence=SpecDependency.Evidence.DECLARED).select_related(
        "from_spec", "to_spec"
    ):
        declared.setdefault(dep.from_spec.key, []).append(dep.to_spec.key)
    for key, fields in specs_in.items():
        spec = specs.get(key)
        if spec is None:
            raise TaskInputError(f"spec {key!r} does not exist in this task")
        if not isinstance(fields, dict) or set(fields) - set(SPEC_FIELDS):
            raise TaskInputError(f"spec {key}: only {', '.join(SPEC_FIELDS)} can be edited")
        for name in ("statement", "rationale", "kind"):
            if name not in fields:
                continue
            after = _text(fields[name], f"spec {key} {name}")
            if name == "statement" and not after.strip():
                raise TaskInputError(f"spec {key}: the statement is empty")
            if name == "kind" and after not in Specification.Kind.values:
                raise TaskInputError(
                    f"spec {key}: kind must be one of {', '.join(Specification.Kind.values)}"
                )
            before = getattr(spec, name)
            if after != before:
                diff[f"specs.{key}.{name}"] = {"before": before, "after": after}
                ops.append(("spec", spec, name, after))
        if "depends_on" in fields:
            after = _keys(fields["depends_on"], f"spec {key} depends_on")
            for target in after:
                if target == key:
                    raise TaskInputError(f"spec {key} cannot depend on itself")
                if target not in specs:
                    raise TaskInputError(f"spec {key} depends on unknown spec {target!r}")
            before = sorted(declared.get(key, []))
            if after != before:
                diff[f"specs.{key}.depends_on"] = {"before": before, "after": after}
                ops.append(("edges", spec, before, after, specs))


def _test_changes(task: Task, tests_in: Any, diff: dict, ops: list) -> None:
    """Links and code of tests. New code is written into the test patch (the one in `diff`
    if this save also edits the patch, else the stored one)."""
    if not isinstance(tests_in, dict):
        raise TaskInputError("tests must map pytest node ids to their fields")
    tests = {t.nodeid: t for t in task.tests.filter(nodeid__in=list(tests_in))}
    spec_keys = (
        {s.key: s for s in task.specs.all()}
        if any(isinstance(f, dict) and "specs" in f for f in tests_in.values())
        else {}
    )
    for nodeid, fields in tests_in.items():
        test = tests.get(nodeid)
        if test is None:
            raise TaskInputError(f"test {nodeid!r} does not exist in this task")
        if not isinstance(fields, dict) or set(fields) - set(TEST_FIELDS):
            raise TaskInputError(f"test {nodeid}: only {', '.join(TEST_FIELDS)} can be edited")
        if "code" in fields:
            after = _text(fields["code"], f"test {nodeid} code")
            patch = diff.get("test_patch", {}).get("after", task.test_patch)
            read_base = base_reader(task.repository, task.base_commit)
            try:
                before, _ = source_of_test(patch, nodeid, read_base)
                new_patch = replace_test(patch, nodeid, after, read_base)
            except (PatchEditError, PatchParseError) as exc:
                raise TaskInputError(f"test {nodeid}: {exc}") from None
            if new_patch != patch:
                diff[f"tests.{nodeid}.code"] = {"before": before, "after": after.rstrip()}
                previous = diff.get("test_patch", {}).get("before", task.test_patch)
                diff["test_patch"] = {"before": previous, "after": new_patch}
                # The stored copy follows the patch, for readers of the row.
                ops.append(("test", test, "code", after.rstrip()))
        if "specs" in fields:
            after = _keys(fields["specs"], f"test {nodeid} specs")
            unknown = [k for k in after if k not in spec_keys]
            if unknown:
                raise TaskInputError(f"test {nodeid} names unknown spec(s) {', '.join(unknown)}")
            before = sorted(s.key for s in test.specs.all())
            if after != before:
                diff[f"tests.{nodeid}.specs"] = {"before": before, "after": after}
                ops.append(("test_specs", test, [spec_keys[k] for k in after]))


def _claim(test, *, before: list[Specification], after: list[Specification]) -> None:
    """A person linking a test to a spec claims it verifies the spec; validation checks it."""
    changed = []
    for spec in {s.pk: s for s in [*before, *after]}.values():
        claimed = set(spec.claimed_tests or [t.nodeid for t in spec.tests.all()])
        wanted = claimed | {test.nodeid} if spec in after else claimed - {test.nodeid}
        if wanted != claimed or not spec.claimed_tests:
            spec.claimed_tests = sorted(wanted)
            changed.append(spec)
    Specification.objects.bulk_update(changed, ["claimed_tests"])


def _summary(diff: dict) -> str:
    labels = []
    for name in diff:
        if name.startswith("specs."):
            _, key, what = name.split(".", 2)
            labels.append(f"{key} {what.replace('_', ' ')}")
        elif name.startswith("tests."):
            labels.append(f"test {name[len('tests.') :].rsplit('.', 1)[0].rsplit('::', 1)[-1]}")
        else:
            labels.append(name.replace("_", " "))
    text = "edited " + ", ".join(dict.fromkeys(labels))
    return text if len(text) <= 300 else text[:299] + "…"


def task_update_content(
    *, task: Task, user, expected_revision: int, changes: dict[str, Any]
) -> EditResult:
    """Apply `changes` if the task is still at `expected_revision`; record a revision; revalidate.

    Raises StaleRevision (nothing written) when someone saved first, TaskInputError when the
    changes are not valid, EditNotAllowed when the task's content is frozen.
    """
    if not isinstance(changes, dict):
        raise TaskInputError("changes must be an object")
    unknown = set(changes) - {*TEXT_FIELDS, "specs", "tests"}
    if unknown:
        raise TaskInputError(f"cannot edit {', '.join(sorted(unknown))}")
    with transaction.atomic():
        locked = Task.objects.select_for_update().get(pk=task.pk)
        if locked.revision != expected_revision:
            newer = list(
                locked.revisions.filter(revision__gt=expected_revision)
                .select_related("author")
                .order_by("revision")
            )
            raise StaleRevision(
                expected=expected_revision, current=locked.revision, revisions=newer
            )
        if not locked.is_editable:
            raise EditNotAllowed(f"a {locked.get_status_display().lower()} task cannot be edited")

        diff: dict[str, dict[str, Any]] = {}
        ops: list[tuple] = []
        for name in TEXT_FIELDS:
            if name in changes:
                after = _text(changes[name], name.replace("_", " "))
                if name == "title" and not after.strip():
                    raise TaskInputError("the title is empty")
                if after != getattr(locked, name):
                    diff[name] = {"before": getattr(locked, name), "after": after}
        if "problem_statement" in diff:
            check_statement(diff["problem_statement"]["after"])
        if "specs" in changes:
            _spec_changes(locked, changes["specs"], diff, ops)
        if "tests" in changes:
            _test_changes(locked, changes["tests"], diff, ops)
        if "reference_patch" in diff or "test_patch" in diff:
            check_patches(
                reference_patch=diff.get("reference_patch", {}).get(
                    "after", locked.reference_patch
                ),
                test_patch=diff.get("test_patch", {}).get("after", locked.test_patch),
                read_base=base_reader(locked.repository, locked.base_commit),
            )
        if not diff:
            return EditResult(task=locked, revision=None)

        for name in TEXT_FIELDS:
            if name in diff:
                setattr(locked, name, diff[name]["after"])
        for op in ops:
            if op[0] in ("spec", "test"):
                _, obj, name, value = op
                setattr(obj, name, value)
                obj.save(update_fields=[name])
            elif op[0] == "edges":
                _, spec, before, after, specs = op
                removed = set(before) - set(after)
                if removed:
                    locked.dependencies.filter(
                        evidence=SpecDependency.Evidence.DECLARED,
                        from_spec=spec,
                        to_spec__key__in=removed,
                    ).delete()
                SpecDependency.objects.bulk_create(
                    SpecDependency(
                        task=locked,
                        from_spec=spec,
                        to_spec=specs[target],
                        relation="depends-on",
                        evidence=SpecDependency.Evidence.DECLARED,
                    )
                    for target in sorted(set(after) - set(before))
                )
            elif op[0] == "test_specs":
                _, test, specs = op
                _claim(test, before=list(test.specs.all()), after=specs)
                test.specs.set(specs)

        locked.revision += 1
        locked.save(
            update_fields=[*[n for n in TEXT_FIELDS if n in diff], "revision", "updated_at"]
        )
        revision = TaskRevision.objects.create(
            task=locked,
            revision=locked.revision,
            author=user if getattr(user, "is_authenticated", False) else None,
            summary=_summary(diff),
            changes=diff,
        )
        task_content_changed.send(sender=Task, task=locked, revision=locked.revision, user=user)
        job = task_validation_enqueue(task=locked, user=user)
    # The caller's object follows, so a view can render what it holds without a reload.
    for name in (*TEXT_FIELDS, "revision", "status", "updated_at"):
        setattr(task, name, getattr(locked, name))
    return EditResult(task=locked, revision=revision, job=job)


def touched_fields(changes: dict[str, Any]) -> set[str]:
    """The names a revision's `changes` would record for these edits (`title`, `specs.S1.kind`,
    `tests.<node id>.code`...), to compare an edit with revisions saved since it was loaded."""
    names = {k for k in changes if k not in ("specs", "tests")}
    for key, fields in changes.get("specs", {}).items():
        names |= {f"specs.{key}.{f}" for f in fields}
    for nodeid, fields in changes.get("tests", {}).items():
        names |= {f"tests.{nodeid}.{f}" for f in fields}
    return names


def task_update_content_over_own_saves(
    *, task: Task, user, expected_revision: int, changes: dict[str, Any]
) -> EditResult:
    """`task_update_content`, except that the editor's own saves since `expected_revision` are
    not a conflict when they touched other fields: the edit is applied on top of them.

    An editor with two items open saves one, then the other; the second form still carries
    the older revision. Raises StaleRevision as `task_update_content` does when anyone else
    saved in between, or when the editor's own saves changed a field this edit changes.
    """
    try:
        return task_update_content(
            task=task, user=user, expected_revision=expected_revision, changes=changes
        )
    except StaleRevision as stale:
        own = all(rev.author_id == user.pk for rev in stale.revisions)
        overlap = touched_fields(changes) & {
            name for rev in stale.revisions for name in rev.changes
        }
        if not stale.revisions or not own or overlap:
            raise
        return task_update_content(
            task=task, user=user, expected_revision=stale.current, changes=changes
        )
