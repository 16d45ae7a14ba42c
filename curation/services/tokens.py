"""API tokens: created with a key that is shown once, stored only as its SHA-256, revocable.

A key reads `sl_<prefix>_<secret>`. The prefix is stored in clear so a token can be found and
recognised in lists and logs; the whole key is hashed, so a database leak gives no usable key.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable

from django.db import IntegrityError, transaction
from django.utils import timezone

from curation import access
from curation.models import ApiToken

TOKEN_PREFIX = "sl_"
SCOPES = tuple(ApiToken.Scope.values)
# Tokens that may write or cut releases may also read what they write: a write-only token
# would make a pipeline that pushes trajectories unable to check what it pushed.
_IMPLIES = {
    ApiToken.Scope.WRITE: ApiToken.Scope.READ,
    ApiToken.Scope.RELEASE: ApiToken.Scope.READ,
    # A pipeline that grades patches reads the tasks it grades.
    ApiToken.Scope.GRADE: ApiToken.Scope.READ,
}
MAX_TOKENS_PER_USER = 50


class TokenInputError(ValueError):
    """The token cannot be created as asked; the message says why."""


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def split_key(key: str) -> str | None:
    """The prefix of a well-formed key, or None."""
    if not key.startswith(TOKEN_PREFIX) or key.count("_") < 2:
        return None
    prefix = key[len(TOKEN_PREFIX) :].split("_", 1)[0]
    return prefix or None


def normalise_scopes(scopes: Iterable[str]) -> list[str]:
    wanted = set(scopes)
    unknown = wanted - set(SCOPES)
    if unknown:
        raise TokenInputError(
            f"unknown scope(s) {', '.join(sorted(unknown))}; choose from {', '.join(SCOPES)}"
        )
    if not wanted:
        raise TokenInputError("choose at least one scope")
    wanted |= {_IMPLIES[s] for s in wanted if s in _IMPLIES}
    return [s for s in SCOPES if s in wanted]


def api_token_create(*, user, name: str, scopes: Iterable[str]) -> tuple[ApiToken, str]:
    """Create a token for `user`; returns the token and its key (the only time it exists)."""
    if not access.is_reviewer(user):
        raise TokenInputError("only users with a role (reviewer, curator, admin) can have tokens")
    name = (name or "").strip()
    if not name:
        raise TokenInputError("give the token a name")
    if len(name) > ApiToken._meta.get_field("name").max_length:
        raise TokenInputError("the name is longer than 100 characters")
    normalised = normalise_scopes(scopes)
    if ApiToken.Scope.RELEASE in normalised and not access.is_curator(user):
        raise TokenInputError("the release scope needs the curator role")
    if ApiToken.objects.filter(user=user, revoked_at__isnull=True).count() >= MAX_TOKENS_PER_USER:
        raise TokenInputError(f"you already have {MAX_TOKENS_PER_USER} active tokens")
    if ApiToken.objects.filter(user=user, name=name).exists():
        raise TokenInputError(f"you already have a token named {name!r}")
    for _ in range(5):
        prefix = secrets.token_hex(5)
        key = f"{TOKEN_PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
        try:
            with transaction.atomic():
                token = ApiToken.objects.create(
                    user=user,
                    name=name,
                    prefix=prefix,
                    key_sha256=hash_key(key),
                    scopes=normalised,
                )
        except IntegrityError:
            if ApiToken.objects.filter(user=user, name=name).exists():
                raise TokenInputError(f"you already have a token named {name!r}") from None
            continue  # a prefix collision (one in a trillion): draw again
        return token, key
    raise TokenInputError("could not allocate a unique token prefix; try again")


def api_token_revoke(*, token: ApiToken) -> bool:
    """Revoke the token now; False when it was already revoked. Revoked tokens stay listed."""
    return bool(
        ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
    )
