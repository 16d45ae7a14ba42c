"""The review queue and "claim the next task"."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from review import services
from review.selectors import queue as selectors
from review.views.common import chosen_dataset, partial, reviewer_required


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
        return partial(request, "review/queue.html", "results", context)
    return render(request, "review/queue.html", context)


@require_POST
@reviewer_required
def claim_next(request):
    dataset = chosen_dataset(request, request.POST)
    assignment = services.review_claim_next(user=request.user, dataset=dataset)
    if assignment is None:
        messages.info(request, "Nothing left to claim: every task you can review is taken.")
        target = reverse("review-queue")
    else:
        target = reverse("review-task", args=[assignment.task_id])
    if request.htmx:
        return HttpResponseClientRedirect(target)
    return redirect(target)
