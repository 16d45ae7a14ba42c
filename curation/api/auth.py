"""API tokens: `Authorization: Bearer sl_<prefix>_<secret>`, stored as a SHA-256 of the key.

Repeated failures from one address are throttled, so a leaked prefix cannot be brute-forced.
"""

from __future__ import annotations

import hmac
from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from curation.models import ApiToken
from curation.services.tokens import hash_key, split_key


def _client_address(request) -> str:
    return request.META.get("REMOTE_ADDR", "unknown")


def _failure_key(request) -> str:
    return f"api-auth-failures:{_client_address(request)}"


class TokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        parts = header.split()
        if len(parts) != 2 or parts[0] not in (self.keyword, "Token"):
            return None
        failures = cache.get(_failure_key(request), 0)
        if failures >= settings.API_FAILED_AUTH_LIMIT:
            raise exceptions.Throttled(
                wait=settings.API_FAILED_AUTH_WINDOW_SECONDS,
                detail="Too many failed token authentications from this address; try later.",
            )
        token = self._lookup(parts[1])
        if token is None:
            try:
                cache.incr(_failure_key(request))
            except ValueError:
                cache.set(_failure_key(request), 1, settings.API_FAILED_AUTH_WINDOW_SECONDS)
            raise exceptions.AuthenticationFailed("Invalid or revoked API token.")
        now = timezone.now()
        if token.last_used_at is None or now - token.last_used_at > timedelta(seconds=60):
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return (token.user, token)

    def _lookup(self, key: str) -> ApiToken | None:
        prefix = split_key(key)
        if prefix is None:
            return None
        token = (
            ApiToken.objects.select_related("user")
            .filter(prefix=prefix, revoked_at__isnull=True)
            .first()
        )
        if token is None or not token.user.is_active:
            return None
        if not hmac.compare_digest(token.key_sha256, hash_key(key)):
            return None
        return token

    def authenticate_header(self, request) -> str:
        return self.keyword


class TokenAuthenticationScheme(OpenApiAuthenticationExtension):
    """Describes the token in the OpenAPI schema (and gives Swagger UI its Authorize box)."""

    target_class = TokenAuthentication
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An API token: `Authorization: Bearer sl_<prefix>_<secret>`.",
        }
