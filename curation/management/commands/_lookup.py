"""Finding the task or dataset a command-line argument names (a numeric id, or its name)."""

from __future__ import annotations

from django.core.management.base import CommandError

from curation.models import Dataset, Task


def task_named(name_or_id: str) -> Task:
    """The task with this id or instance id."""
    lookup = (
        {"pk": int(name_or_id)}
        if name_or_id.isascii() and name_or_id.isdigit()
        else {"instance_id": name_or_id}
    )
    task = Task.objects.filter(**lookup).first()
    if task is None:
        raise CommandError(f"no task {name_or_id!r}")
    return task


def dataset_named(name_or_id: str) -> Dataset:
    """The dataset with this id or name."""
    lookup = (
        {"pk": int(name_or_id)}
        if name_or_id.isascii() and name_or_id.isdigit()
        else {"name": name_or_id}
    )
    dataset = Dataset.objects.filter(**lookup).first()
    if dataset is None:
        raise CommandError(f"no dataset {name_or_id!r}")
    return dataset
