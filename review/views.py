"""HTML views of the reviewer's workspace. Plain functions; objects come through access helpers.

Pages render whole templates; htmx requests get the named partial of the same template
(`"review/task.html#decision"`), so a page and its fragments never drift apart. Every view
checks the role first, and every task is fetched with `get_task_for_user` (404 for outsiders).
"""

from __future__ import annotations

import functools
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import format_html
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import (
    HttpResponseClientRedirect,
    HttpResponseStopPolling,
    trigger_client_event,
)

from curation.access import (
    get_dataset_for_user,
    get_task_for_user,
    is_curator,
    is_reviewer,
    visible_datasets,
)
from curation.models import Specification, Task
from curation.services.editing import (
    EditNotAllowed,
    StaleRevision,
    task_update_content,
)
from curation.services.tasks import TaskInputError
from review import agreement, rendering, selectors, services
from review.forms import (
    RUBRIC_HELP,
    CommentForm,
    DecisionForm,
    PatchForm,
    SpecForm,
    StatementForm,
    TestCodeForm,
)
from review.models import Adjudication, Comment, ReviewAssignment

TASK_QS = Task.objects.select_related("repository", "dataset")


def reviewer_required(view):
    """Logged in and holding a role; anyone else gets a page that says so (403)."""

    @functools.wraps(view)
    @login_required
    def wrapper(request, *args, **kwargs):
        if not is_reviewer(request.user):
            if "task_id" in kwargs or "trajectory_id" in kwargs:
                raise Http404("No such task.")  # an outsider learns nothing about what exists
            if request.htmx:
                raise PermissionDenied("This needs the reviewer role.")
            return render(request, "review/no_role.html", status=403)
        return view(request, *args, **kwargs)

    return wrapper


def curator_required(view):
    @functools.wraps(view)
    @reviewer_required
    def wrapper(request, *args, **kwargs):
        if not is_curator(request.user):
            raise PermissionDenied("This needs the curator role.")
        return view(request, *args, **kwargs)

    return wrapper


def _task(request, task_id) -> Task:
    return get_task_for_user(request.user, task_id, queryset=TASK_QS)


def _partial(request, template: str, name: str, context: dict, *, status: int = 200):
    return render(request, f"{template}#{name}", context, status=status)


def _chosen_dataset(request, params):
    """The dataset a `dataset` parameter names (404 unless the user may see it), or None."""
    name_or_id = params.get("dataset")
    return get_dataset_for_user(request.user, name_or_id) if name_or_id else None


# --- dashboard -------------------------------------------------------------------------------


@require_GET
@reviewer_required
def dashboard(request):
    user = request.user
    dataset = _chosen_dataset(request, request.GET)
    rates = selectors.pass_rates(user=user, dataset=dataset)
    report = agreement.agreement_report(user=user, dataset=dataset)
    context = {
        "nav": "dashboard",
        "dataset": dataset,
        "datasets": list(visible_datasets(user).values_list("name", flat=True)),
        "status_counts": selectors.status_counts(user=user),
        "statuses": Task.Status.values,
        "mine": selectors.my_queue(user=user),
        "jobs": selectors.running_jobs(user=user),
        "validating": selectors.validating_count(user=user),
        "throughput": selectors.throughput(user=user),
        "agreement": report,
        "chart": rendering.pass_rate_svg(rates, kinds=Specification.Kind.values),
        "adjudications": (
            Adjudication.objects.filter(resolved_at__isnull=True).count()
            if is_curator(user)
            else None
        ),
        "calibration": selectors.calibration_card(user=user, dataset=dataset),
    }
    return render(request, "review/dashboard.html", context)


@require_GET
@reviewer_required
def running_jobs(request):
    return _partial(
        request,
        "review/dashboard.html",
        "jobs",
        {
            "jobs": selectors.running_jobs(user=request.user),
            "validating": selectors.validating_count(user=request.user),
        },
    )


# --- queue -----------------------------------------------------------------------------------


@require_GET
@reviewer_required
def queue(request):
    filters = selectors.QueueFilters.from_query(request.GET)
    try:
        page = selectors.queue_page(user=request.user, filters=filters)
    except selectors.BadCursor as exc:
        if request.htmx:
            return HttpResponseBadRequest(str(exc))
        messages.error(request, str(exc))
        return redirect(f"{reverse('review-queue')}?{filters.query(cursor='')}")
    context = {
        "nav": "queue",
        "page": page,
        "filters": filters,
        "choices": selectors.queue_choices(user=request.user),
        "first_page": filters.query(cursor=""),
        "next_page": filters.query(cursor=page.next_cursor) if page.next_cursor else "",
    }
    if request.htmx and request.htmx.target == "queue-results":
        return _partial(request, "review/queue.html", "results", context)
    return render(request, "review/queue.html", context)


@require_POST
@reviewer_required
def claim_next(request):
    dataset = _chosen_dataset(request, request.POST)
    assignment = services.review_claim_next(user=request.user, dataset=dataset)
    if assignment is None:
        messages.info(request, "Nothing left to claim: every task you can review is taken.")
        target = reverse("review-queue")
    else:
        target = reverse("review-task", args=[assignment.task_id])
    if request.htmx:
        return HttpResponseClientRedirect(target)
    return redirect(target)


# --- the task page ---------------------------------------------------------------------------


def _workspace_context(request, task: Task) -> dict:
    workspace = selectors.task_workspace(task=task, user=request.user)
    prev_id, next_id = selectors.neighbours(task=task, user=request.user)
    return {
        "nav": "queue",
        "w": workspace,
        "task": task,
        "prev_id": prev_id,
        "next_id": next_id,
        "rubric_help": RUBRIC_HELP,
        "difficulties": Task.Difficulty.choices,
        "spec_kinds": Specification.Kind.values,
        "form": None,
    }


@require_GET
@reviewer_required
def task_detail(request, task_id):
    task = _task(request, task_id)
    return render(request, "review/task.html", _workspace_context(request, task))


PANELS = {
    "header": "header",
    "approve": "approve",
    "patch-reference": "patch-block",
    "patch-test": "patch-block",
    "decision": "decision",
    "specs": "specs",
    "tests": "tests",
    "findings": "findings",
    "comments": "comments",
}


@require_GET
@reviewer_required
def task_panel(request, task_id, panel):
    """Re-render one zone of the task page after an edit, a validation or a decision."""
    if panel not in PANELS:
        raise Http404("No such panel.")
    task = _task(request, task_id)
    context = _workspace_context(request, task)
    if panel.startswith("patch-"):
        context.update(_patch_vars(context["w"], panel.removeprefix("patch-")))
    return _partial(request, "review/task.html", PANELS[panel], context)


def _patch_vars(workspace, name: str) -> dict:
    if name == "reference":
        return {
            "patch_name": "reference",
            "diff": workspace.reference_diff,
            "patch_field": "reference_patch",
        }
    return {"patch_name": "test", "diff": workspace.test_diff, "patch_field": "test_patch"}


@require_GET
@reviewer_required
def task_history(request, task_id):
    task = _task(request, task_id)
    return _partial(
        request,
        "review/task.html",
        "history",
        {"task": task, "events": selectors.task_history(task=task)},
    )


@require_GET
@reviewer_required
def task_jobs(request, task_id):
    """The task's jobs with progress. Polled while one runs; 286 stops the polling when done."""
    task = _task(request, task_id)
    jobs = selectors.task_jobs(task)
    running = any(not j.is_finished for j in jobs)
    hidden = selectors.findings_hidden(task=task, user=request.user)
    response = _partial(
        request,
        "review/task.html",
        "jobs",
        {"task": task, "jobs": jobs, "polling": running, "findings_hidden": hidden},
    )
    if request.GET.get("watching") and not running:
        response.status_code = 286
        trigger_client_event(response, "task-validated")
    return response


@require_GET
@reviewer_required
def task_saved(request, task_id, revision):
    """The "Saved as rN" note of an edit, polled while rN validates; 286 once that ended."""
    task = _task(request, task_id)
    if task.revision != revision:
        state = "superseded"
    elif task.status == Task.Status.VALIDATING:
        state = "validating"
    else:
        state = "validated" if task.validated_revision == revision else "invalid"
    context = {
        "task": task,
        "saved_revision": revision,
        "saved_state": state,
        "saved_final": state != "validating",
    }
    if state == "validating":
        return _partial(request, "review/task.html", "saved-note", context)
    return HttpResponseStopPolling(
        render_to_string("review/task.html#saved-note", context, request=request)
    )


# --- leases ----------------------------------------------------------------------------------


def _lease_response(request, task: Task, *, note: str = "", status: int = 200):
    lease = selectors.lease_for(task, request.user)
    response = _partial(
        request,
        "review/task.html",
        "lease",
        {"task": task, "lease": lease, "note": note},
        status=status,
    )
    return response


@require_POST
@reviewer_required
def task_claim(request, task_id):
    task = _task(request, task_id)
    try:
        services.review_claim(task=task, user=request.user)
    except services.ReviewError as exc:
        if request.htmx:
            return _lease_response(request, task, note=str(exc), status=exc.status)
        messages.error(request, str(exc))
        return redirect("review-task", task_id=task.pk)
    if request.htmx:
        return HttpResponseClientRedirect(reverse("review-task", args=[task.pk]))
    return redirect("review-task", task_id=task.pk)


@require_POST
@reviewer_required
def task_release(request, task_id):
    task = _task(request, task_id)
    assignment = ReviewAssignment.objects.filter(
        task=task, reviewer=request.user, status=ReviewAssignment.Status.ACTIVE
    ).first()
    if assignment is None or not services.review_release(assignment=assignment, user=request.user):
        if request.htmx:
            return _lease_response(request, task, note="You do not hold this task.", status=409)
        messages.error(request, "You do not hold this task.")
        return redirect("review-task", task_id=task.pk)
    # Not "released": on this site a release is a dataset version.
    messages.info(request, f"Returned {task.instance_id} to the queue.")
    if request.htmx:
        return HttpResponseClientRedirect(reverse("review-queue"))
    return redirect("review-queue")


@require_POST
@reviewer_required
def task_heartbeat(request, task_id):
    """Renews the lease while the page is open; answers 286 (stop polling) once it is lost."""
    task = _task(request, task_id)
    assignment = ReviewAssignment.objects.filter(
        task=task, reviewer=request.user, status=ReviewAssignment.Status.ACTIVE
    ).first()
    if assignment is None or not services.review_heartbeat(
        assignment=assignment, user=request.user
    ):
        decided = ReviewAssignment.objects.filter(
            task=task, reviewer=request.user, status=ReviewAssignment.Status.COMPLETED
        ).exists()
        note = (
            "Your decision is recorded."
            if decided
            else "Your lease on this task ended. Claim it again to decide."
        )
        response = _lease_response(request, task, note=note)
        response.status_code = 286  # stop renewing
        if not decided:
            trigger_client_event(response, "lease-lost")
        return response
    return _lease_response(request, task)


# --- decisions -------------------------------------------------------------------------------


def _rubric(form: DecisionForm) -> services.RubricInput:
    data = form.cleaned_data
    return services.RubricInput(
        decision=data["decision"],
        spec_clarity=data["spec_clarity"],
        test_validity=data["test_validity"],
        interdependency=data["interdependency"],
        difficulty=data["difficulty"],
        comment=data.get("comment") or "",
    )


def _decision_response(request, task, *, form=None, error="", outcome=None, status=200):
    context = _workspace_context(
        request, Task.objects.select_related("repository", "dataset").get(pk=task.pk)
    )
    context.update({"form": form, "error": error, "outcome": outcome})
    response = _partial(request, "review/task.html", "decision", context, status=status)
    if outcome is not None:
        trigger_client_event(response, "task-decided")
    return response


@require_POST
@reviewer_required
def task_decide(request, task_id):
    task = _task(request, task_id)
    return _decision_post(
        request,
        task,
        lambda form: services.review_submit(
            task=task,
            user=request.user,
            rubric=_rubric(form),
            expected_revision=form.cleaned_data["revision"],
        ),
    )


@require_POST
@curator_required
def task_adjudicate(request, task_id):
    task = _task(request, task_id)
    adjudication = Adjudication.objects.filter(task=task, resolved_at__isnull=True).first()
    if adjudication is None:
        raise Http404("Nothing to adjudicate on this task.")
    return _decision_post(
        request,
        task,
        lambda form: services.review_adjudicate(
            adjudication=adjudication, user=request.user, rubric=_rubric(form)
        ),
    )


def _decision_post(request, task, decide):
    """A decision or an adjudication from the decision form: `decide(form)` calls the service.
    Answers the htmx partial, or (without htmx) redirects to the task page with a message."""
    form = DecisionForm(request.POST)
    if not form.is_valid():
        if not request.htmx:
            messages.error(request, "; ".join(e for errs in form.errors.values() for e in errs))
            return redirect("review-task", task_id=task.pk)
        return _decision_response(request, task, form=form, status=400)
    try:
        outcome = decide(form)
    except services.ReviewError as exc:
        if not request.htmx:
            messages.error(request, str(exc))
            return redirect("review-task", task_id=task.pk)
        return _decision_response(request, task, form=form, error=str(exc), status=exc.status)
    if not request.htmx:
        messages.success(request, outcome.message)
        return redirect("review-task", task_id=task.pk)
    return _decision_response(request, task, outcome=outcome)


@require_GET
@curator_required
def adjudication_queue(request):
    return render(
        request,
        "review/adjudication.html",
        {"nav": "adjudication", "items": selectors.adjudication_queue(user=request.user)},
    )


# --- edit in place ---------------------------------------------------------------------------

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
        code, _, _ = selectors.test_code(task=task, test=obj)
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


def _touched(changes: dict) -> set[str]:
    names = {k for k in changes if k not in ("specs", "tests")}
    for key, fields in changes.get("specs", {}).items():
        names |= {f"specs.{key}.{f}" for f in fields}
    for nodeid, fields in changes.get("tests", {}).items():
        names |= {f"tests.{nodeid}.{f}" for f in fields}
    return names


def _display(request, task: Task, part: str, obj, *, status=200, extra=None):
    context = _workspace_context(request, task)
    if part == "spec":
        context["spec"] = next(s for s in context["w"].specs if s.pk == obj.pk)
    elif part == "test":
        context["test"] = next(t for t in context["w"].tests if t.pk == obj.pk)
    else:
        context.update(_patch_vars(context["w"], part.removesuffix("_patch")))
    context.update(extra or {})
    name = {"statement": "statement", "spec": "spec", "test": "test"}.get(part, "patch-block")
    return _partial(request, "review/task.html", name, context, status=status)


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
    return _partial(request, "review/edit.html", "form", context, status=status)


@require_http_methods(["GET", "POST"])
@reviewer_required
def task_edit(request, task_id, part, ident=None):
    """GET: the edit form of one item; POST: save it as a new revision and revalidate."""
    if part not in EDITABLE:
        raise Http404("Nothing to edit there.")
    task = _task(request, task_id)
    obj = _edit_target(task, part, ident)
    if not selectors.can_edit(task=task, user=request.user):
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
    changes = _changes(part, obj, form.cleaned_data)
    expected = form.cleaned_data["revision"]
    try:
        try:
            result = task_update_content(
                task=task, user=request.user, expected_revision=expected, changes=changes
            )
        except StaleRevision as stale:
            # One's own earlier saves of *other* fields are not a conflict: apply on top.
            own = all(r.author_id == request.user.pk for r in stale.revisions)
            overlap = _touched(changes) & {n for r in stale.revisions for n in r.changes}
            if not own or overlap or not stale.revisions:
                raise
            result = task_update_content(
                task=task, user=request.user, expected_revision=stale.current, changes=changes
            )
    except StaleRevision as stale:
        fresh = _edit_form(TASK_QS.get(pk=task.pk), part, obj)
        data = request.POST.copy()
        data["revision"] = stale.current
        mine = _edit_form(TASK_QS.get(pk=task.pk), part, obj, data=data)
        mine.is_valid()
        response = _form_response(
            request,
            task,
            part,
            obj,
            mine,
            status=409,
            error=str(stale),
            conflict={"stale": stale, "fresh": fresh, "history": _conflict_view(stale)},
        )
        return response
    except (TaskInputError, EditNotAllowed) as exc:
        return _form_response(request, task, part, obj, form, status=400, error=str(exc))
    task = TASK_QS.get(pk=task.pk)
    obj = _edit_target(task, part, ident)
    response = _display(request, task, part, obj, extra={"saved": result.changed})
    if result.changed:
        trigger_client_event(response, "task-updated", {"revision": task.revision})
    return response


def _conflict_view(stale: StaleRevision) -> list[dict]:
    out = []
    for rev in stale.revisions:
        fields = []
        for name, change in rev.changes.items():
            before, after = change.get("before"), change.get("after")
            if isinstance(before, str) and isinstance(after, str):
                lines = selectors.text_diff(before, after)
                fields.append({"name": name, "diff": lines})
            else:
                fields.append({"name": name, "before": before, "after": after})
        out.append({"rev": rev, "fields": fields})
    return out


# --- comments --------------------------------------------------------------------------------


@require_POST
@reviewer_required
def task_comment(request, task_id):
    task = _task(request, task_id)

    def refused(message: str, status: int):
        if request.htmx:
            return HttpResponse(format_html("<p class='error'>{}</p>", message), status=status)
        messages.error(request, message)
        return redirect("review-task", task_id=task.pk)

    form = CommentForm(request.POST)
    if not form.is_valid():
        return refused("; ".join(e for errs in form.errors.values() for e in errs), 400)
    data = form.cleaned_data
    try:
        comment = services.comment_create(
            task=task,
            user=request.user,
            body=data["body"],
            anchor=data["anchor"],
            spec_key=data.get("spec") or "",
            test_id=data.get("test"),
            patch=data.get("patch") or "",
            file_path=data.get("file_path") or "",
            line=data.get("line"),
        )
    except services.ReviewError as exc:
        return refused(str(exc), exc.status)
    if not request.htmx:
        return redirect(f"{reverse('review-task', args=[task.pk])}#comment-{comment.pk}")
    if comment.anchor == Comment.Anchor.TASK:
        response = _partial(
            request, "review/task.html", "comments", _workspace_context(request, task)
        )
    else:
        response = _partial(
            request,
            "review/task.html",
            "comment-list",
            {
                "comments": selectors.comment_thread(comment=comment),
                "task": task,
                "anchor": comment.anchor,
            },
        )
    trigger_client_event(response, "comments-changed")
    return response


# --- trajectories ----------------------------------------------------------------------------


@require_GET
@reviewer_required
def trajectory_detail(request, trajectory_id):
    trajectory = selectors.visible_trajectory(user=request.user, trajectory_id=trajectory_id)
    try:
        after = int(request.GET.get("after", -1))
    except ValueError:
        return HttpResponseBadRequest("after must be a step index")
    steps, next_after = selectors.trajectory_steps(trajectory=trajectory, after=after)
    context = {
        "nav": "queue",
        "trajectory": trajectory,
        "task": trajectory.task,
        "steps": steps,
        "next_after": next_after,
    }
    if request.htmx and after >= 0:
        return _partial(request, "review/trajectory.html", "steps", context)
    context.update(selectors.trajectory_detail(trajectory=trajectory))
    context["findings_hidden"] = selectors.findings_hidden(task=trajectory.task, user=request.user)
    return render(request, "review/trajectory.html", context)


# --- agreement -------------------------------------------------------------------------------


@require_GET
@reviewer_required
def agreement_page(request):
    dataset = _chosen_dataset(request, request.GET)
    report = agreement.agreement_report(user=request.user, dataset=dataset)
    return render(
        request,
        "review/agreement.html",
        {
            "nav": "agreement",
            "report": report,
            "dataset": dataset,
            "datasets": list(visible_datasets(request.user).values_list("name", flat=True)),
            "query": urlencode({"dataset": dataset.name}) if dataset else "",
        },
    )
