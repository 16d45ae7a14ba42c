"""Datasets: create one, set its review policy, choose its members."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from curation import access
from curation.forms import DatasetCreateForm, DatasetPolicyForm, MemberAddForm
from curation.models import Dataset, Release, Task
from curation.pages.common import curator_page
from curation.services.datasets import (
    DatasetInputError,
    dataset_add_member,
    dataset_create,
    dataset_remove_member,
    dataset_update_policy,
    grantable_roles,
)

LIST = "curation/datasets.html"
DETAIL = "curation/dataset_detail.html"


def _count(queryset):
    """COUNT(*) of a queryset filtered on the outer dataset, as a subquery (0 when none)."""
    per_dataset = queryset.order_by().values("dataset").annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(per_dataset[:1]), 0)


def _list_page(request, form=None, status=200):
    # One subquery per count: joining tasks, members and releases at once would multiply rows.
    datasets = (
        access.visible_datasets(request.user)
        .annotate(
            task_count=_count(Task.objects.filter(dataset=OuterRef("pk"))),
            approved_count=_count(
                Task.objects.filter(dataset=OuterRef("pk"), status__in=["approved", "released"])
            ),
            member_count=_count(Dataset.members.through.objects.filter(dataset=OuterRef("pk"))),
            release_count=_count(Release.objects.filter(dataset=OuterRef("pk"))),
        )
        .order_by("name")
    )
    return render(
        request,
        LIST,
        {
            "nav": "pipeline",
            "step": "datasets",
            "datasets": datasets,
            "form": form or DatasetCreateForm(),
        },
        status=status,
    )


@require_GET
@curator_page
def datasets(request):
    return _list_page(request)


@require_POST
@curator_page
def dataset_create_view(request):
    form = DatasetCreateForm(request.POST)
    if not form.is_valid():
        return _list_page(request, form, status=400)
    try:
        dataset = dataset_create(**form.cleaned_data)
    except DatasetInputError as exc:
        form.add_error(None, str(exc))
        return _list_page(request, form, status=400)
    messages.success(request, f"Dataset {dataset.name} created.")
    return redirect("dataset-detail", dataset_id=dataset.pk)


def _detail_page(request, dataset, *, policy_form=None, member_form=None, status=200):
    members = list(dataset.members.order_by("username").prefetch_related("groups"))
    for member in members:
        member.role_names = sorted(
            {g.name for g in member.groups.all()} & {"reviewer", "curator", "admin"}
            | ({"admin"} if member.is_superuser else set())
        )
    counts = dict(
        dataset.tasks.values_list("status").annotate(n=Count("id")).values_list("status", "n")
    )
    roles = grantable_roles(request.user)
    return render(
        request,
        DETAIL,
        {
            "nav": "pipeline",
            "step": "datasets",
            "dataset": dataset,
            "members": members,
            "status_counts": [(s, counts.get(s, 0)) for s in Task.Status.values],
            "policy_form": policy_form
            or DatasetPolicyForm(
                initial={
                    "description": dataset.description,
                    "reviews_required": dataset.reviews_required,
                    "consensus": dataset.consensus,
                    "validation_reruns": dataset.validation_reruns,
                }
            ),
            "member_form": member_form or MemberAddForm(roles=roles),
            "releases": dataset.releases.order_by("-id")[:5],
        },
        status=status,
    )


@require_GET
@curator_page
def dataset_detail(request, dataset_id: int):
    return _detail_page(request, access.get_dataset_for_user(request.user, dataset_id))


@require_POST
@curator_page
def dataset_policy(request, dataset_id: int):
    dataset = access.get_dataset_for_user(request.user, dataset_id)
    form = DatasetPolicyForm(request.POST)
    if not form.is_valid():
        return _detail_page(request, dataset, policy_form=form, status=400)
    try:
        changed = dataset_update_policy(dataset=dataset, **form.cleaned_data)
    except DatasetInputError as exc:
        form.add_error(None, str(exc))
        return _detail_page(request, dataset, policy_form=form, status=400)
    messages.success(
        request,
        "Policy saved." if changed else "Nothing changed.",
    )
    return redirect("dataset-detail", dataset_id=dataset.pk)


@require_POST
@curator_page
def dataset_member_add(request, dataset_id: int):
    dataset = access.get_dataset_for_user(request.user, dataset_id)
    form = MemberAddForm(request.POST, roles=grantable_roles(request.user))
    if not form.is_valid():
        return _detail_page(request, dataset, member_form=form, status=400)
    try:
        member = dataset_add_member(
            dataset=dataset,
            username=form.cleaned_data["username"],
            role=form.cleaned_data["role"],
            by=request.user,
        )
    except DatasetInputError as exc:
        form.add_error(None, str(exc))
        return _detail_page(request, dataset, member_form=form, status=400)
    messages.success(request, f"{member.get_username()} reviews {dataset.name} now.")
    return redirect("dataset-detail", dataset_id=dataset.pk)


@require_POST
@curator_page
def dataset_member_remove(request, dataset_id: int, user_id: int):
    dataset = access.get_dataset_for_user(request.user, dataset_id)
    if dataset_remove_member(dataset=dataset, user_id=user_id):
        messages.success(request, "Member removed.")
    else:
        messages.error(request, "That person is not a member.")
    return redirect("dataset-detail", dataset_id=dataset.pk)
