"""Edit in place: one item of the task page (its statement, a spec, a test, a patch) becomes a
form, and saving it makes a new revision that revalidates."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.views.decorators.http import require_http_methods
from django_htmx.http import trigger_client_event

from curation.models import Task
from curation.services.editing import (
    EditNotAllowed,
    StaleRevision,
    task_update_content_over_own_saves,
)
from curation.services.tasks import TaskInputError
from review.forms import PatchForm, SpecForm, StatementForm, TestCodeForm
from review.selectors.history import revision_changes
from review.selectors.workspace import can_edit, test_code
from review.views.common import TASK_QS, partial, reviewer_required, task_for
from review.views.task import patch_vars, workspace_context

EDITABLE = ("statement", "spec", "test", "reference_patch", "test_patch")


def _edit_target(task: Task, part: str, ident: str | None):
    if part == "spec":
        spec = task.specs.filter(key=ident).first()
        if spec is None:
            raise Http404("No such spec.")
        return spec
    if part == "test":
        try:
            test = task.tests.filter(pk=int(ident or "")).first()
        except ValueError:
            test = None
        if test is None:
            raise Http404("No such test.")
        return test
    return None


def _edit_form(task: Task, part: str, obj, data=None):
    keys = list(task.specs.order_by("order", "id").values_list("key", flat=True))
    if part == "statement":
        initial = {"title": task.title, "problem_statement": task.problem_statement}
        return StatementForm(data, initial={**initial, "revision": task.revision})
    if part == "spec":
        declared = sorted(
            task.dependencies.filter(from_spec=obj, evidence="declared").values_list(
                "to_spec__key", flat=True
            )
        )
        return SpecForm(
            data,
            spec_keys=[k for k in keys if k != obj.key],
            initial={
                "statement": obj.statement,
                "kind": obj.kind,
                "rationale": obj.rationale,
                "depends_on": declared,
                "revision": task.revision,
            },
        )
    if part == "test":
        code, _, _ = test_code(task=task, test=obj)
        return TestCodeForm(
            data,
            spec_keys=keys,
            initial={
                "code": code,
                "specs": sorted(obj.specs.values_list("key", flat=True)),
                "revision": task.revision,
            },
        )
    field = part
    return PatchForm(data, initial={"patch": getattr(task, field), "revision": task.revision})


def _changes(part: str, obj, data: dict) -> dict:
    if part == "statement":
        return {"title": data["title"], "problem_statement": data["problem_statement"]}
    if part == "spec":
        return {
            "specs": {
                obj.key: {
                    "statement": data["statement"],
                    "kind": data["kind"],
                    "rationale": data["rationale"],
                    "depends_on": list(data["depends_on"]),
                }
            }
        }
    if part == "test":
        return {"tests": {obj.nodeid: {"code": data["code"], "specs": list(data["specs"])}}}
    return {part: data["patch"]}


def _display(request, task: Task, part: str, obj, *, status=200, extra=None):
    context = workspace_context(request, task)
    if part == "spec":
        context["spec_item"] = next(i for i in context["w"].spec_items if i.spec.pk == obj.pk)
    elif part == "test":
        context["test_item"] = next(i for i in context["w"].test_items if i.test.pk == obj.pk)
    else:
        context.update(patch_vars(context["w"], part.removesuffix("_patch")))
    context.update(extra or {})
    name = {"statement": "statement", "spec": "spec", "test": "test"}.get(part, "patch-block")
    return partial(request, "review/task.html", name, context, status=status)


def _form_response(request, task, part, obj, form, *, status=200, error="", conflict=None):
    context = {
        "task": task,
        "part": part,
        "obj": obj,
        "form": form,
        "error": error,
        "conflict": conflict,
        "action": request.path,
    }
    return partial(request, "review/edit.html", "form", context, status=status)


@require_http_methods(["GET", "POST"])
@reviewer_required
def task_edit(request, task_id, part, ident=None):
    """GET: the edit form of one item; POST: save it as a new revision and revalidate."""
    if part not in EDITABLE:
        raise Http404("Nothing to edit there.")
    task = task_for(request, task_id)
    obj = _edit_target(task, part, ident)
    if not can_edit(task=task, user=request.user):
        raise PermissionDenied(
            "Claim the task (or be a curator) to edit it; a decided task is frozen."
        )
    if request.method == "GET":
        if request.GET.get("cancel"):
            return _display(request, task, part, obj)
        return _form_response(request, task, part, obj, _edit_form(task, part, obj))

    form = _edit_form(task, part, obj, data=request.POST)
    if not form.is_valid():
        return _form_response(
            request, task, part, obj, form, status=400, error="Fix the fields marked below."
        )
    try:
        result = task_update_content_over_own_saves(
            task=task,
            user=request.user,
            expected_revision=form.cleaned_data["revision"],
            changes=_changes(part, obj, form.cleaned_data),
        )
    except StaleRevision as stale:
        return _conflict_response(request, task, part, obj, stale)
    except (TaskInputError, EditNotAllowed) as exc:
        return _form_response(request, task, part, obj, form, status=400, error=str(exc))
    task = TASK_QS.get(pk=task.pk)
    obj = _edit_target(task, part, ident)
    response = _display(request, task, part, obj, extra={"saved": result.changed})
    if result.changed:
        trigger_client_event(response, "task-updated", {"revision": task.revision})
    return response


def _conflict_response(request, task: Task, part: str, obj, stale: StaleRevision):
    """409: the item as it is now, the editor's form rebased on the current revision, and what
    the other saves changed."""
    current = TASK_QS.get(pk=task.pk)
    fresh = _edit_form(current, part, obj)
    data = request.POST.copy()
    data["revision"] = stale.current
    mine = _edit_form(current, part, obj, data=data)
    mine.is_valid()
    history = [{"rev": rev, "fields": revision_changes(rev.changes)} for rev in stale.revisions]
    return _form_response(
        request,
        task,
        part,
        obj,
        mine,
        status=409,
        error=str(stale),
        conflict={"stale": stale, "fresh": fresh, "history": history},
    )
