"""HTML pages of the curation domain: API tokens, releases with their datasheets, and the review
agent's calibration against human decisions.

Plain functions; every view checks the role first, and objects come through access helpers
(an object you may not see is a 404, never a hint that it exists).
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseStopPolling

from curation import access
from curation.forms import ReleaseCutForm, TokenForm
from curation.models import ApiToken, Release
from curation.selectors.audit import audit_calibration
from curation.selectors.releases import get_release_for_user, releases_listed
from curation.services.releases import ReleaseInputError, release_cut
from curation.services.tokens import TokenInputError, api_token_create, api_token_revoke


def _get_token_for_user(user, token_id) -> ApiToken:
    token = ApiToken.objects.filter(pk=token_id, user=user).first()
    if token is None:
        raise Http404("No such token.")
    return token


def _tokens_page(request, *, form: TokenForm, new_key: str = "", status: int = 200):
    return render(
        request,
        "curation/tokens.html",
        {
            "nav": "tokens",
            "form": form,
            "tokens": ApiToken.objects.filter(user=request.user).order_by("-created_at", "-id"),
            "new_key": new_key,
            "is_curator": access.is_curator(request.user),
        },
        status=status,
    )


@require_GET
@login_required
def tokens(request):
    access.require_reviewer(request.user)
    return _tokens_page(request, form=TokenForm())


@require_POST
@login_required
def token_create(request):
    access.require_reviewer(request.user)
    form = TokenForm(request.POST)
    if not form.is_valid():
        return _tokens_page(request, form=form, status=400)
    try:
        _, key = api_token_create(
            user=request.user, name=form.cleaned_data["name"], scopes=form.cleaned_data["scopes"]
        )
    except TokenInputError as exc:
        form.add_error(None, str(exc))
        return _tokens_page(request, form=form, status=400)
    # The key is shown in this response only: it is stored as a hash and cannot be shown again.
    response = _tokens_page(request, form=TokenForm(), new_key=key, status=201)
    response["Cache-Control"] = "no-store"
    return response


@require_POST
@login_required
def token_revoke(request, token_id: int):
    access.require_reviewer(request.user)
    token = _get_token_for_user(request.user, token_id)
    if api_token_revoke(token=token):
        messages.success(request, f"Token {token.name!r} is revoked.")
    else:
        messages.info(request, f"Token {token.name!r} was already revoked.")
    return redirect("api-tokens")


@require_GET
@login_required
def releases(request):
    access.require_reviewer(request.user)
    curator = access.is_curator(request.user)
    return render(
        request,
        "curation/releases.html",
        {
            "nav": "releases",
            "releases": releases_listed(request.user).order_by("dataset__name", "-id"),
            "form": ReleaseCutForm(user=request.user) if curator else None,
        },
    )


@require_POST
@login_required
def release_cut_view(request):
    access.require_curator(request.user)
    form = ReleaseCutForm(request.POST, user=request.user)
    if not form.is_valid():
        return render(
            request,
            "curation/releases.html",
            {
                "nav": "releases",
                "releases": releases_listed(request.user).order_by("dataset__name", "-id"),
                "form": form,
            },
            status=400,
        )
    try:
        release = release_cut(
            dataset=form.cleaned_data["dataset"],
            version=form.cleaned_data["version"] or None,
            user=request.user,
            trajectories=form.cleaned_data["trajectories"],
            include_unsafe=form.cleaned_data["include_unsafe"],
        )
    except ReleaseInputError as exc:
        messages.error(request, str(exc))
        return redirect("releases")
    messages.success(request, f"Cutting {release} (job {release.job_id}).")
    return redirect("release-detail", release_id=release.pk)


@require_GET
@login_required
def release_detail(request, release_id: int):
    access.require_reviewer(request.user)
    release = get_release_for_user(request.user, release_id)
    context = {"nav": "releases", "release": release, "sheet": release.datasheet}
    if request.htmx:
        response = render(request, "curation/release_detail.html#status", context)
        if release.status != Release.Status.BUILDING:
            # Done: the page reloads itself to show the datasheet, and polling stops.
            response = HttpResponseStopPolling(response.content)
            response["HX-Refresh"] = "true"
        return response
    return render(request, "curation/release_detail.html", context)


@require_GET
@login_required
def calibration(request):
    """Whether the review agent beats trivial baselines on a dataset (curators)."""
    access.require_curator(request.user)
    datasets = access.visible_datasets(request.user).order_by("name")
    name = request.GET.get("dataset", "").strip()
    dataset = access.get_dataset_for_user(request.user, name) if name else datasets.first()
    return render(
        request,
        "curation/calibration.html",
        {
            "nav": "calibration",
            "dataset": dataset,
            "datasets": list(datasets.values_list("name", flat=True)),
            "report": audit_calibration(dataset=dataset) if dataset else None,
        },
    )
