"""The API's role checks are the UI's (curation.access); tokens add scopes on top."""

from __future__ import annotations

from rest_framework import permissions

from curation import access
from curation.models import ApiToken


def token_scopes(request) -> set[str] | None:
    """The scopes of the token used, or None for a browser session (full role rights)."""
    if isinstance(request.auth, ApiToken):
        return set(request.auth.scopes)
    return None


class RoleAndScopePermission(permissions.BasePermission):
    """Reads need any role and the `read` scope; writes need `write`; views may ask for more
    through `required_scope` ("release") and `required_role` ("curator")."""

    message = "You do not have permission to do this."

    def has_permission(self, request, view) -> bool:
        user = request.user
        if not (user and user.is_authenticated):
            return False
        if not access.is_reviewer(user):
            return False
        required_role = getattr(view, "required_role", None)
        if callable(required_role):
            required_role = required_role(request)
        if required_role == access.CURATOR and not access.is_curator(user):
            return False
        scopes = token_scopes(request)
        if scopes is None:
            return True
        needed = getattr(view, "required_scope", None)
        if callable(needed):
            needed = needed(request)
        if needed is None:
            needed = "read" if request.method in permissions.SAFE_METHODS else "write"
        return needed in scopes
