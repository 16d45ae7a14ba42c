"""Trajectories: upload a file of agent runs (any supported format, detected), see the import
report with the line of every record that could not be imported."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from django.db.models import Count
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from curation import access
from curation.forms import TrajectoryUploadForm
from curation.ingest import FORMATS
from curation.ingest.sniff import SUPPORTED
from curation.models import Trajectory
from curation.pages.common import curator_page
from curation.services.trajectories import ImportRefused, trajectories_import_file

PAGE = "curation/trajectories.html"
_SAFE_NAME = re.compile(r"[^\w.-]+")


def _form(user, data=None, files=None):
    return TrajectoryUploadForm(
        data,
        files,
        datasets=access.visible_datasets(user).order_by("name"),
        formats=FORMATS,
        initial={"format": "auto", "evaluate": True},
    )


def _page(request, form, *, report=None, refused="", status=200):
    by_model = (
        Trajectory.objects.filter(task__in=access.visible_tasks(request.user))
        .values("task__dataset__name", "model_name")
        .annotate(n=Count("id"), tasks=Count("task", distinct=True))
        .order_by("task__dataset__name", "model_name")
    )
    return render(
        request,
        PAGE,
        {
            "nav": "pipeline",
            "step": "trajectories",
            "form": form,
            "report": report,
            "refused": refused,
            "supported": SUPPORTED,
            "by_model": list(by_model[:200]),
        },
        status=status,
    )


def _task(user, raw: str):
    raw = raw.strip()
    tasks = access.visible_tasks(user)
    task = tasks.filter(instance_id=raw).first()
    if task is None and raw.isdigit():
        task = tasks.filter(pk=int(raw)).first()
    return task


@require_http_methods(["GET", "POST"])
@curator_page
def trajectories(request):
    if request.method == "GET":
        return _page(request, _form(request.user))
    form = _form(request.user, request.POST, request.FILES)
    if not form.is_valid():
        return _page(request, form, status=400)
    data = form.cleaned_data
    task = None
    if data["task"]:
        task = _task(request.user, data["task"])
        if task is None:
            form.add_error("task", f"No task {data['task'][:100]!r}.")
            return _page(request, form, status=400)
    upload = data["file"]
    # The file keeps its name: some formats name the instance only there (SWE-agent .traj).
    name = _SAFE_NAME.sub("_", Path(upload.name or "upload.json").name)[:120] or "upload.json"
    with tempfile.TemporaryDirectory(prefix="specloom-upload-") as folder:
        path = Path(folder) / name
        with path.open("wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
        try:
            report = trajectories_import_file(
                path=path,
                fmt=data["format"],
                task=task,
                dataset=data["dataset"],
                model=data["model"].strip() or None,
                user=request.user,
                evaluate=data["evaluate"],
                tasks=access.visible_tasks(request.user),
            )
        except ImportRefused as exc:
            return _page(request, form, refused=str(exc), status=400)
    outcome = report.as_dict()
    status = 400 if outcome["errors"] and not outcome["created"] else 200
    return _page(request, _form(request.user), report=outcome, status=status)
