"""What every review view shares: the role checks, fetching a task, rendering a partial."""

from __future__ import annotations

import functools

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import render
from django.template.loader import render_to_string
from django_htmx.http import HttpResponseStopPolling

from curation.access import get_dataset_for_user, get_task_for_user, is_curator, is_reviewer
from curation.models import Task

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


def task_for(request, task_id) -> Task:
    return get_task_for_user(request.user, task_id, queryset=TASK_QS)


def partial(request, template: str, name: str, context: dict, *, status: int = 200):
    return render(request, f"{template}#{name}", context, status=status)


def chosen_dataset(request, params):
    """The dataset a `dataset` parameter names (404 unless the user may see it), or None."""
    name_or_id = params.get("dataset")
    return get_dataset_for_user(request.user, name_or_id) if name_or_id else None


def stop_polling(request, template: str, name: str, context: dict) -> HttpResponseStopPolling:
    """The partial, answered with htmx's "stop polling" status (286): what it polled for ended."""
    return HttpResponseStopPolling(render_to_string(f"{template}#{name}", context, request=request))
