"""Jobs: every job with what it works on, its state, outcome and reason; retry and cancel."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseStopPolling

from curation import access
from curation.pages.common import curator_page, job_progress_response, render_partial
from curation.selectors.jobs import CANCELLABLE, attach_subjects, get_job, job_kinds, jobs_filtered
from workers.models import Job
from workers.services import JobNotRetryable, job_cancel, job_retry

LIST = "curation/jobs.html"
DETAIL = "curation/job_detail.html"
PAGE_SIZE = 50


def _filters(request) -> dict[str, str]:
    kind = (request.GET.get("kind") or "").strip()[:64]
    status = (request.GET.get("status") or "").strip()
    if status not in Job.Status.values:
        status = ""
    return {"kind": kind, "status": status}


def _page_number(request) -> int:
    try:
        return max(1, int(request.GET.get("page") or 1))
    except ValueError:
        return 1


@require_GET
@curator_page
def jobs(request):
    filters = _filters(request)
    paginator = Paginator(jobs_filtered(**filters), PAGE_SIZE)
    page = paginator.get_page(_page_number(request))
    rows = attach_subjects(list(page.object_list))
    context = {
        "nav": "pipeline",
        "step": "jobs",
        "filters": filters,
        "kinds": job_kinds(),
        "statuses": Job.Status.values,
        "page": page,
        "rows": rows,
        "live": any(job.status in CANCELLABLE for job in rows),
        "query": "&".join(f"{k}={v}" for k, v in filters.items() if v),
    }
    if request.htmx and request.GET.get("part") == "table":
        response = render_partial(request, LIST, "table", context)
        if not context["live"]:
            response = HttpResponseStopPolling(response.content)
        return response
    return render(request, LIST, context)


def _detail_context(request, job):
    report = job.result.get("report") if isinstance(job.result, dict) else None
    return {
        "nav": "pipeline",
        "step": "jobs",
        "job": job,
        "report": report if isinstance(report, dict) else None,
        "show_error": bool(job.error)
        and (access.is_admin(request.user) or not job.error.startswith("Traceback")),
    }


@require_GET
@curator_page
def job_detail(request, job_id: int):
    job = get_job(job_id)
    return render(request, DETAIL, _detail_context(request, job))


@require_GET
@curator_page
def job_progress(request, job_id: int):
    job = get_job(job_id)
    return job_progress_response(
        request, job, template=DETAIL, name="status", context=_detail_context(request, job)
    )


@require_POST
@curator_page
def job_retry_view(request, job_id: int):
    job = get_job(job_id)
    try:
        retry = job_retry(job=job, user=request.user)
    except JobNotRetryable as exc:
        messages.error(request, str(exc).capitalize() + ".")
        return redirect("job-detail", job_id=job.pk)
    messages.success(request, f"Job {job.pk} is queued again as job {retry.pk}.")
    return redirect("job-detail", job_id=retry.pk)


@require_POST
@curator_page
def job_cancel_view(request, job_id: int):
    job = get_job(job_id)
    if job_cancel(job=job):
        messages.success(request, f"Job {job.pk} is cancelled.")
    else:
        messages.error(request, f"Job {job.pk} has already finished ({job.status}).")
    target = request.POST.get("next")
    if target == "list":
        return redirect("jobs")
    return redirect("job-detail", job_id=job.pk)
