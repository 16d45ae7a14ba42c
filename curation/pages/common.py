"""What every curator page shares: the role check and the job progress fragment."""

from __future__ import annotations

import functools

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import render
from django_htmx.http import HttpResponseStopPolling

from curation import access

# The kwargs that name an object: an outsider asking for one learns nothing (404).
OBJECT_KWARGS = ("repository_id", "dataset_id", "job_id", "user_id")


def curator_page(view):
    """Logged in with the curator (or admin) role. No role: the "no access" page (404 for an
    object); a reviewer: 403, a page saying the page is for curators."""

    @functools.wraps(view)
    @login_required
    def wrapper(request, *args, **kwargs):
        user = request.user
        if not access.is_reviewer(user):
            if any(name in kwargs for name in OBJECT_KWARGS):
                raise Http404("No such page.")
            if request.htmx:
                raise PermissionDenied("This needs a role.")
            return render(request, "review/no_role.html", status=403)
        if not access.is_curator(user):
            if request.htmx:
                raise PermissionDenied("This page is for curators.")
            # A reviewer who followed a link: a page in the app's style that says why (403).
            return render(request, "curation/curators_only.html", status=403)
        return view(request, *args, **kwargs)

    return wrapper


def render_partial(request, template: str, name: str, context: dict, *, status: int = 200):
    return render(request, f"{template}#{name}", context, status=status)


def job_progress_response(request, job, *, template: str, name: str, context: dict):
    """The job's fragment; once it has finished, the same fragment with status 286 so that
    htmx stops polling (and, asked for with ?refresh=1, reloads the page around it)."""
    response = render_partial(request, template, name, context)
    if not job.is_finished:
        return response
    stopped = HttpResponseStopPolling(response.content)
    if request.GET.get("refresh") == "1":
        stopped["HX-Refresh"] = "true"
    return stopped


class UploadLimitMiddleware:
    """413 for a page's POST whose body says it is larger than an upload may be, before
    anything (the CSRF check parses forms) reads it to disk. The API has its own limit."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method == "POST" and not request.path.startswith("/api/"):
            limit = settings.SPECLOOM_UPLOAD_MAX_BYTES
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > limit + 64 * 1024:  # room for the form's other fields
                return render(
                    request,
                    "curation/upload_too_large.html",
                    {"limit": limit, "length": length},
                    status=413,
                )
        return self.get_response(request)
