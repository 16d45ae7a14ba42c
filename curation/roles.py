"""Model permissions of the role groups, kept in step after every migrate.

Permissions only exist after post_migrate has created them, so they are attached here rather
than in the data migration that creates the groups.
"""

from __future__ import annotations

from django.contrib.auth.models import Group, Permission

from curation.access import ADMIN, CURATOR, REVIEWER

_APPS = ("curation", "review", "workers")


def sync_role_permissions(**kwargs) -> None:
    ours = Permission.objects.filter(content_type__app_label__in=_APPS)
    grants = {
        REVIEWER: ours.filter(codename__startswith="view_"),
        CURATOR: ours.exclude(codename__in=["delete_release", "change_release"]),
        ADMIN: Permission.objects.all(),
    }
    for name, permissions in grants.items():
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.set(permissions)
