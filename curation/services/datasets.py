"""Datasets: their review policy and who reviews them.

Roles are global groups (reviewer, curator, admin); a dataset's members are the reviewers who
see its tasks. Adding a member may give a person without a role the reviewer role (curators
may do that); only an admin makes curators.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import IntegrityError, transaction
from django.utils.text import slugify

from curation import access
from curation.models import Dataset

MAX_REVIEWS_REQUIRED = 10
MAX_RERUNS = 20


class DatasetInputError(ValueError):
    """What a curator asked for cannot be; the message says why."""


class DatasetExists(DatasetInputError):
    """The name is taken (a conflict with what exists, not a malformed request)."""


def _check_policy(*, reviews_required: Any, consensus: Any, validation_reruns: Any) -> dict:
    def number(value, name, top):
        if isinstance(value, bool) or not isinstance(value, int):
            raise DatasetInputError(f"{name} must be a whole number")
        if not 1 <= value <= top:
            raise DatasetInputError(f"{name} must be between 1 and {top}")
        return value

    if consensus not in Dataset.Consensus.values:
        raise DatasetInputError(
            f"consensus must be one of {', '.join(Dataset.Consensus.values)}, not {consensus!r}"
        )
    return {
        "reviews_required": number(reviews_required, "reviews required", MAX_REVIEWS_REQUIRED),
        "consensus": consensus,
        "validation_reruns": number(validation_reruns, "validation reruns", MAX_RERUNS),
    }


def _description(value: Any) -> str:
    if not isinstance(value, str):
        raise DatasetInputError("the description must be text")
    if "\x00" in value or len(value) > 10_000:
        raise DatasetInputError("the description must be text of at most 10,000 characters")
    return value.strip()


def dataset_create(
    *,
    name: str,
    description: str = "",
    reviews_required: int = 1,
    consensus: str = Dataset.Consensus.UNANIMOUS,
    validation_reruns: int = 3,
) -> Dataset:
    if not isinstance(name, str) or not name.strip():
        raise DatasetInputError("give the dataset a name")
    slug = slugify(name)[:100]
    if not slug or slug != name.strip():
        raise DatasetInputError(
            f"{name[:60]!r} is not a valid name: use lower-case letters, digits, - and _"
            + (f" (e.g. {slug!r})" if slug else "")
        )
    policy = _check_policy(
        reviews_required=reviews_required,
        consensus=consensus,
        validation_reruns=validation_reruns,
    )
    try:
        with transaction.atomic():
            return Dataset.objects.create(
                name=slug, description=_description(description), **policy
            )
    except IntegrityError:
        raise DatasetExists(f"a dataset named {slug!r} already exists") from None


def dataset_update_policy(
    *,
    dataset: Dataset,
    description: str | None = None,
    reviews_required: int | None = None,
    consensus: str | None = None,
    validation_reruns: int | None = None,
) -> list[str]:
    """Change the policy; returns the fields that changed. Reviews already given stay."""
    policy = _check_policy(
        reviews_required=dataset.reviews_required if reviews_required is None else reviews_required,
        consensus=dataset.consensus if consensus is None else consensus,
        validation_reruns=(
            dataset.validation_reruns if validation_reruns is None else validation_reruns
        ),
    )
    if description is not None:
        policy["description"] = _description(description)
    changed = [name for name, value in policy.items() if getattr(dataset, name) != value]
    for name in changed:
        setattr(dataset, name, policy[name])
    if changed:
        dataset.save(update_fields=changed)
    return changed


def grantable_roles(user) -> list[str]:
    """The roles `user` may give someone when adding them to a dataset."""
    if access.is_admin(user):
        return [access.REVIEWER, access.CURATOR]
    if access.is_curator(user):
        return [access.REVIEWER]
    return []


def dataset_add_member(*, dataset: Dataset, username: str, by, role: str = "") -> Any:
    """Make `username` a member; with `role`, give them that role too (never takes one away)."""
    users = get_user_model()
    member = users.objects.filter(username=(username or "").strip(), is_active=True).first()
    if member is None:
        raise DatasetInputError(f"no active user named {username[:60]!r}")
    if role:
        if role not in grantable_roles(by):
            raise DatasetInputError(f"you cannot give the {role!r} role")
        member.groups.add(Group.objects.get(name=role))
        member.__dict__.pop("_specloom_roles", None)
    if not access.is_reviewer(member):
        raise DatasetInputError(
            f"{member.get_username()} has no role; give them the reviewer role to add them"
        )
    dataset.members.add(member)
    return member


def dataset_remove_member(*, dataset: Dataset, user_id: int) -> bool:
    """Leases they hold run out on their own; their reviews stay."""
    if not dataset.members.filter(pk=user_id).exists():
        return False
    dataset.members.remove(user_id)
    return True
