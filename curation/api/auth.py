"""API tokens: `Authorization: Bearer sl_<prefix>_<secret>`, stored as a SHA-256 of the key.

Failed authentications are counted per client address and per token prefix. Past the limit, a
further *bad* token from that address, or for that prefix, is answered 429 instead of 401: a
scanner learns nothing more and costs little. A valid token always works, whatever was tried
from its address or against its prefix: behind a proxy or a NAT one address is many clients,
and counting per address must never lock them all out. Guessing a key is hopeless anyway (the
secret is 256 random bits); the limit keeps noise and load down, it is not what protects keys.
"""

from __future__ import annotations

import hashlib
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


def _failure_keys(request, key: str) -> list[str]:
    """The counters one failure adds to: its address, and the prefix the key names (hashed:
    it is whatever the client sent)."""
    prefix = split_key(key) or "(malformed)"
    prefix_digest = hashlib.sha256(prefix.encode("utf-8", "replace")).hexdigest()[:32]
    return [
        f"api-auth-failures:address:{_client_address(request)}",
        f"api-auth-failures:prefix:{prefix_digest}",
    ]


def _count_failure(cache_key: str) -> int:
    window = settings.API_FAILED_AUTH_WINDOW_SECONDS
    cache.add(cache_key, 0, window)
    try:
        return cache.incr(cache_key)
    except ValueError:  # expired between the two calls
        cache.set(cache_key, 1, window)
        return 1


class TokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        parts = header.split()
        if len(parts) != 2 or parts[0] not in (self.keyword, "Token"):
            return None
        token = self._lookup(parts[1])
        if token is None:
            counts = [_count_failure(key) for key in _failure_keys(request, parts[1])]
            if max(counts) > settings.API_FAILED_AUTH_LIMIT:
                raise exceptions.Throttled(
                    wait=settings.API_FAILED_AUTH_WINDOW_SECONDS,
                    detail=(
                        "Too many failed token authentications from this address or for this "
                        "token; try later. A valid token is never refused."
                    ),
                )
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
