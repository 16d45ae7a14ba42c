"""Typed readers for environment variables that fail loudly on values they cannot parse.

A typo in a deployment's environment should stop the process at start-up with the variable's
name in the message, not surface later as a strange default.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str, *, environ: Mapping[str, str] | None = None) -> str:
    environ = os.environ if environ is None else environ
    return environ.get(name, default)


def env_bool(name: str, default: bool, *, environ: Mapping[str, str] | None = None) -> bool:
    environ = os.environ if environ is None else environ
    raw = environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false, yes/no), got {raw!r}")


def env_int(
    name: str,
    default: int,
    *,
    minimum: int | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    environ = os.environ if environ is None else environ
    raw = environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}")
    return value


def env_list(
    name: str, default: list[str], *, environ: Mapping[str, str] | None = None
) -> list[str]:
    environ = os.environ if environ is None else environ
    raw = environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_path(name: str, default: Path, *, environ: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if environ is None else environ
    raw = environ.get(name)
    return Path(raw).expanduser().resolve() if raw else default


SQLITE_OPTIONS = {
    # WAL lets the web server read while a worker writes; IMMEDIATE takes the write lock at
    # BEGIN so two writers queue on busy_timeout instead of failing half-way through.
    "init_command": "PRAGMA journal_mode=WAL;PRAGMA synchronous=NORMAL;PRAGMA busy_timeout=20000;",
    "transaction_mode": "IMMEDIATE",
    "timeout": 20,
}


def database_from_url(url: str, *, conn_max_age: int = 60) -> dict:
    """Turn a DATABASE_URL into Django's DATABASES entry, or say clearly what is wrong with it."""
    import dj_database_url

    if "://" not in url:
        raise ImproperlyConfigured(
            f"DATABASE_URL is not a URL: {url!r} (expected e.g. postgres://user@host:5432/name)"
        )
    try:
        config = dj_database_url.parse(url, conn_max_age=conn_max_age, conn_health_checks=True)
    except (ValueError, KeyError) as exc:
        raise ImproperlyConfigured(f"DATABASE_URL could not be parsed ({exc}): {url!r}") from None
    if config.get("ENGINE") not in {
        "django.db.backends.postgresql",
        "django.db.backends.sqlite3",
    }:
        raise ImproperlyConfigured(
            f"DATABASE_URL names an unsupported database {config.get('ENGINE')!r}; "
            "use postgres:// or sqlite://"
        )
    if not config.get("NAME"):
        raise ImproperlyConfigured(f"DATABASE_URL names no database: {url!r}")
    if config["ENGINE"] == "django.db.backends.sqlite3":
        config["OPTIONS"] = dict(SQLITE_OPTIONS)
        config["CONN_MAX_AGE"] = 0
    return config


def private_folder(path: Path) -> Path:
    """Create `path` (and missing parents) readable by the application's user alone (0700).

    Storage, the SQLite database, the broker's folders and the cache hold secrets and other
    repositories' sources; no other user of the host, the sandbox's jailed user least of all,
    may list or read them.
    """
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.stat().st_uid == os.geteuid():
        path.chmod(0o700)
    return path
