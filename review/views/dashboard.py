"""The dashboard, its running-jobs fragment, and the agreement page."""

from __future__ import annotations

from urllib.parse import urlencode

from django.shortcuts import render
from django.views.decorators.http import require_GET

from curation.access import is_curator, visible_datasets
from curation.models import Specification, Task
from review import agreement, rendering
from review.selectors import dashboard as selectors
from review.views.common import chosen_dataset, partial, reviewer_required


@require_GET
@reviewer_required
def dashboard(request):
    user = request.user
    dataset = chosen_dataset(request, request.GET)
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
        "adjudications": (selectors.open_adjudication_count() if is_curator(user) else None),
        "calibration": selectors.calibration_card(user=user, dataset=dataset),
    }
    return render(request, "review/dashboard.html", context)


@require_GET
@reviewer_required
def running_jobs(request):
    return partial(
        request,
        "review/dashboard.html",
        "jobs",
        {
            "jobs": selectors.running_jobs(user=request.user),
            "validating": selectors.validating_count(user=request.user),
        },
    )


@require_GET
@reviewer_required
def agreement_page(request):
    dataset = chosen_dataset(request, request.GET)
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
