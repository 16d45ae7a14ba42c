"""Roles and who may see what. Views and API endpoints fetch objects only through these helpers.

Roles are the groups `reviewer`, `curator` and `admin` (made by a data migration). Curators and
admins see every dataset; a reviewer sees the datasets they are a member of; anyone else sees
nothing, and asking for an object they cannot see gets a 404, not a hint that it exists.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404

from curation.models import Dataset, Task

REVIEWER = "reviewer"
CURATOR = "curator"
ADMIN = "admin"
ROLES = (REVIEWER, CURATOR, ADMIN)


def user_roles(user) -> frozenset[str]:
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return frozenset()
    cached = getattr(user, "_specloom_roles", None)
    if cached is None:
        names = set(user.groups.filter(name__in=ROLES).values_list("name", flat=True))
        if user.is_superuser:
            names.add(ADMIN)
        cached = frozenset(names)
        user._specloom_roles = cached
    return cached


def is_admin(user) -> bool:
    return ADMIN in user_roles(user)


def is_curator(user) -> bool:
    return bool({CURATOR, ADMIN} & user_roles(user))


def is_reviewer(user) -> bool:
    """Anyone who may review: reviewers, and curators and admins who step in."""
    return bool(user_roles(user))


def visible_datasets(user) -> QuerySet[Dataset]:
    if is_curator(user):
        return Dataset.objects.all()
    if REVIEWER in user_roles(user):
        return Dataset.objects.filter(members=user)
    return Dataset.objects.none()


def visible_tasks(user) -> QuerySet[Task]:
    if is_curator(user):
        return Task.objects.all()
    if REVIEWER in user_roles(user):
        return Task.objects.filter(dataset__members=user)
    return Task.objects.none()


def require_curator(user) -> None:
    if not is_curator(user):
        raise PermissionDenied("This needs the curator role.")


def require_reviewer(user) -> None:
    if not is_reviewer(user):
        raise PermissionDenied("This needs the reviewer role.")


def get_task_for_user(user, task_id, *, queryset: QuerySet[Task] | None = None) -> Task:
    """The task, if `user` may see it; 404 otherwise (an outsider learns nothing)."""
    base = queryset if queryset is not None else Task.objects.all()
    try:
        task_pk = int(task_id)
    except (TypeError, ValueError):
        raise Http404("No such task.") from None
    visible = base.filter(pk=task_pk) & visible_tasks(user) if not is_curator(user) else base
    task = visible.filter(pk=task_pk).first()
    if task is None:
        raise Http404("No such task.")
    return task


def get_dataset_for_user(user, name_or_id) -> Dataset:
    datasets = visible_datasets(user)
    dataset = (
        datasets.filter(pk=int(name_or_id)).first()
        if str(name_or_id).isascii() and str(name_or_id).isdigit()
        else datasets.filter(name=name_or_id).first()
    )
    if dataset is None:
        raise Http404("No such dataset.")
    return dataset
