"""Synthesize: a repository, an engine, how many tasks and a seed become a synthesis job."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from curation import access
from curation.forms import SynthesizeForm
from curation.models import Repository
from curation.pages.common import curator_page
from curation.selectors.jobs import attach_subjects
from curation.services.synthesis import SynthesisInputError, synthesis_enqueue
from workers.models import Job

PAGE = "curation/synthesize.html"


def _imported():
    return Repository.objects.exclude(git_path="").exclude(default_commit="").order_by("name")


def _form(user, data=None, initial=None):
    return SynthesizeForm(
        data,
        initial=initial,
        repositories=_imported(),
        datasets=access.visible_datasets(user).order_by("name"),
    )


def _page(request, form, status=200):
    runs = attach_subjects(list(Job.objects.filter(kind="synthesize").order_by("-id")[:10]))
    return render(
        request,
        PAGE,
        {
            "nav": "pipeline",
            "step": "synthesize",
            "form": form,
            "runs": runs,
            "has_repositories": _imported().exists(),
        },
        status=status,
    )


@require_http_methods(["GET", "POST"])
@curator_page
def synthesize(request):
    if request.method == "GET":
        initial = {}
        wanted = request.GET.get("repository")
        if wanted:
            repository = _imported().filter(name=wanted[:100]).first()
            if repository is not None:
                initial["repository"] = repository
        datasets = access.visible_datasets(request.user).order_by("name")
        if datasets.count() == 1:
            initial["dataset"] = datasets.first()
        return _page(request, _form(request.user, initial=initial))
    form = _form(request.user, data=request.POST)
    if not form.is_valid():
        return _page(request, form, status=400)
    data = form.cleaned_data
    try:
        job = synthesis_enqueue(
            repository=data["repository"],
            dataset=data["dataset"],
            engine=data["engine"],
            count=data["count"],
            seed=data["seed"],
            user=request.user,
        )
    except SynthesisInputError as exc:
        form.add_error(None, str(exc))
        return _page(request, form, status=400)
    messages.success(
        request,
        f"Synthesis of {data['count']} task(s) from {data['repository'].name} queued.",
    )
    return redirect("job-detail", job_id=job.pk)
