"""The one settings module. Every deployment difference comes from the environment.

Defaults give the embedded setup that needs no services: SQLite in var/, Celery's filesystem
broker in var/, files in var/storage. DATABASE_URL and REDIS_URL switch to PostgreSQL and Redis;
SPECLOOM_ENV=production turns on the hardening that `manage.py check --deploy` asks for.
"""

from __future__ import annotations

import os
import re
from datetime import timedelta
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from specloom.env import (
    SQLITE_OPTIONS,
    database_from_url,
    env_bool,
    env_int,
    env_list,
    env_path,
    env_str,
    private_folder,
)

BASE_DIR = Path(__file__).resolve().parent.parent
# A test run sets SPECLOOM_VAR_DIR to a folder of its own (tests/var_dir_plugin.py).
VAR_DIR = env_path("SPECLOOM_VAR_DIR", BASE_DIR / "var")

SPECLOOM_ENV = env_str("SPECLOOM_ENV", "development")
if SPECLOOM_ENV not in {"development", "production"}:
    raise ImproperlyConfigured(
        f"SPECLOOM_ENV must be 'development' or 'production', got {SPECLOOM_ENV!r}"
    )
PRODUCTION = SPECLOOM_ENV == "production"

# Off unless asked for (SPECLOOM_DEBUG=1), the demo included: Django's debug pages list every
# URL pattern and much of the configuration.
DEBUG = env_bool("SPECLOOM_DEBUG", False)
# If it is on anyway, its pages still hide connection URLs (they can carry passwords).
DEFAULT_EXCEPTION_REPORTER_FILTER = "specloom.errors.SettingsHidingFilter"
SECRET_KEY = env_str("SECRET_KEY", "")
if not SECRET_KEY:
    if PRODUCTION:
        raise ImproperlyConfigured("SECRET_KEY must be set when SPECLOOM_ENV=production")
    # Development only: a key that is stable across restarts of one checkout but never shipped.
    SECRET_KEY = "dev-insecure-" + str(BASE_DIR).encode().hex()[:40]

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "template_partials",
    "axes",
    "workers",
    "curation",
    "review",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "curation.pages.common.UploadLimitMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "specloom.middleware.ContentSecurityPolicyMiddleware",
    "curation.api.middleware.ApiBodyLimitMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "specloom.urls"
WSGI_APPLICATION = "specloom.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "specloom.middleware.csp_nonce",
                "review.context_processors.roles",
            ],
        },
    }
]

# --- Database -------------------------------------------------------------------------------
DATABASE_URL = env_str("DATABASE_URL", "")
if DATABASE_URL:
    DATABASES = {"default": database_from_url(DATABASE_URL)}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": VAR_DIR / "specloom.sqlite3",
            "OPTIONS": dict(SQLITE_OPTIONS),
            "TEST": {"NAME": VAR_DIR / "test.sqlite3"},
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Cache, broker, storage ----------------------------------------------------------------
REDIS_URL = env_str("REDIS_URL", "")
if REDIS_URL and not REDIS_URL.startswith(("redis://", "rediss://")):
    raise ImproperlyConfigured(
        f"REDIS_URL must start with redis:// or rediss://, got {REDIS_URL!r}"
    )

if REDIS_URL:
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
    }
else:
    # Shared between the web server and workers (the failed-login limiter needs that).
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": VAR_DIR / "cache",
        }
    }

STORAGE_ROOT = env_path("SPECLOOM_STORAGE_ROOT", VAR_DIR / "storage")
MEDIA_ROOT = STORAGE_ROOT
MEDIA_URL = "/media/"
STATIC_URL = "/static/"
STATIC_ROOT = VAR_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}

# --- Specloom ---------------------------------------------------------------------------------
SPECLOOM_REPO_ROOT = STORAGE_ROOT / "repos"
SPECLOOM_RELEASE_ROOT = STORAGE_ROOT / "releases"
# The sandbox's own folder must be readable by the unprivileged user that runs tests, so it
# lives outside any home directory by default.
SPECLOOM_SANDBOX_ROOT = env_path("SPECLOOM_SANDBOX_ROOT", Path("/var/tmp/specloom-sandbox"))  # noqa: S108
SPECLOOM_SANDBOX_BACKEND = env_str("SPECLOOM_SANDBOX_BACKEND", "process")
SPECLOOM_SANDBOX_PYTHON = env_str("SPECLOOM_SANDBOX_PYTHON", "/usr/bin/python3")
# Environment images (workers/sandbox/images.py) are named <prefix>:<environment hash>, in
# SWE-bench records, release manifests and by the docker backend alike.
SPECLOOM_IMAGE_PREFIX = env_str("SPECLOOM_IMAGE_PREFIX", "specloom-env").rstrip("/")
if not re.fullmatch(r"[a-z0-9]+([._/:-][a-z0-9]+)*", SPECLOOM_IMAGE_PREFIX):
    raise ImproperlyConfigured(
        "SPECLOOM_IMAGE_PREFIX must be a Docker repository name (lower-case letters, digits and "
        f". _ - / :), got {SPECLOOM_IMAGE_PREFIX!r}"
    )
SPECLOOM_SANDBOX_WALL_SECONDS = env_int("SPECLOOM_SANDBOX_WALL_SECONDS", 600, minimum=1)
SPECLOOM_SANDBOX_MEMORY_MB = env_int("SPECLOOM_SANDBOX_MEMORY_MB", 2048, minimum=64)
# Where the process backend makes a cgroup per run (relative to each cgroup hierarchy's root)
# and which unprivileged user jailed code runs as.
SPECLOOM_CGROUP_PARENT = env_str("SPECLOOM_CGROUP_PARENT", "specloom")
SPECLOOM_JAIL_USER = env_str("SPECLOOM_JAIL_USER", "nobody")
# Interpreters started (jailed) ahead of the next run of each environment, pytest imported:
# a grade then skips most of its start (workers/sandbox/warm.py). 0 starts every run cold.
SPECLOOM_SANDBOX_WARM_JAILS = env_int("SPECLOOM_SANDBOX_WARM_JAILS", 2, minimum=0)
# ... and at most this many in all (each holds an interpreter, about 40 MB): the most recently
# run environments keep theirs.
SPECLOOM_SANDBOX_WARM_JAILS_TOTAL = env_int("SPECLOOM_SANDBOX_WARM_JAILS_TOTAL", 8, minimum=0)
# How often beat sweeps away what dead workers left in the sandbox (cgroups, run folders).
SPECLOOM_SANDBOX_SWEEP_SECONDS = env_int("SPECLOOM_SANDBOX_SWEEP_SECONDS", 300, minimum=10)
SPECLOOM_ARCHIVE_MAX_BYTES = env_int("SPECLOOM_ARCHIVE_MAX_BYTES", 200 * 1024 * 1024, minimum=1)
SPECLOOM_ARCHIVE_MAX_FILES = env_int("SPECLOOM_ARCHIVE_MAX_FILES", 20_000, minimum=1)
# A task's problem statement: refused at save (and at approval) when empty or larger than this.
SPECLOOM_STATEMENT_MAX_BYTES = env_int("SPECLOOM_STATEMENT_MAX_BYTES", 64 * 1024, minimum=1)
SPECLOOM_UPLOAD_MAX_BYTES = env_int("SPECLOOM_UPLOAD_MAX_BYTES", 100 * 1024 * 1024, minimum=1)
# Folders on the server that curators may import repositories from (by path, in the browser or
# the API). Unset: any path in development, none in production; the command line may use any.
# Hosts a git URL from the browser or the API may name although they are inside the server's
# network (an internal git server); every other host must resolve to public addresses only.
SPECLOOM_IMPORT_ALLOW_HOSTS = env_list("SPECLOOM_IMPORT_ALLOW_HOSTS", [])
# The largest repository a clone may bring (git has no limit of its own).
SPECLOOM_CLONE_MAX_BYTES = env_int("SPECLOOM_CLONE_MAX_BYTES", 2 * 1024**3, minimum=1024**2)
_import_roots = env_list("SPECLOOM_IMPORT_ROOTS", [])
SPECLOOM_IMPORT_ROOTS: list[Path] | None = (
    [Path(root).expanduser().resolve() for root in _import_roots]
    if _import_roots or PRODUCTION or "SPECLOOM_IMPORT_ROOTS" in os.environ
    else None
)
DATA_UPLOAD_MAX_MEMORY_SIZE = SPECLOOM_UPLOAD_MAX_BYTES
# Dataset webhooks: a few attempts with exponential backoff and jitter, inside one job.
SPECLOOM_WEBHOOK_MAX_ATTEMPTS = env_int("SPECLOOM_WEBHOOK_MAX_ATTEMPTS", 5, minimum=1)
SPECLOOM_WEBHOOK_BACKOFF_SECONDS = env_int("SPECLOOM_WEBHOOK_BACKOFF_SECONDS", 2, minimum=0)
SPECLOOM_WEBHOOK_BACKOFF_MAX_SECONDS = env_int(
    "SPECLOOM_WEBHOOK_BACKOFF_MAX_SECONDS", 60, minimum=0
)
SPECLOOM_WEBHOOK_TIMEOUT_SECONDS = env_int("SPECLOOM_WEBHOOK_TIMEOUT_SECONDS", 10, minimum=1)

# Grading patches over the API (curation/services/grading.py): per token (or signed-in user),
# patches accepted per minute and grades queued or running at once; a patch's size and a
# batch's length; a job grades up to GROUP_SIZE patches of one task, THREADS at a time, on the
# task's cached environment; failing tests run RERUNS more times (a flip counts as flaky, passed);
# a long-poll (?wait=) holds a request at most WAIT_MAX_SECONDS.
SPECLOOM_GRADE_RATE_PER_MINUTE = env_int("SPECLOOM_GRADE_RATE_PER_MINUTE", 600, minimum=1)
SPECLOOM_GRADE_MAX_PENDING = env_int("SPECLOOM_GRADE_MAX_PENDING", 64, minimum=1)
SPECLOOM_GRADE_MAX_PATCH_BYTES = env_int("SPECLOOM_GRADE_MAX_PATCH_BYTES", 1024 * 1024, minimum=1)
SPECLOOM_GRADE_BATCH_MAX = env_int("SPECLOOM_GRADE_BATCH_MAX", 256, minimum=1)
SPECLOOM_GRADE_GROUP_SIZE = env_int("SPECLOOM_GRADE_GROUP_SIZE", 8, minimum=1)
SPECLOOM_GRADE_THREADS = env_int("SPECLOOM_GRADE_THREADS", 2, minimum=1)
SPECLOOM_GRADE_RERUNS = env_int("SPECLOOM_GRADE_RERUNS", 1, minimum=0)
SPECLOOM_GRADE_WAIT_MAX_SECONDS = env_int("SPECLOOM_GRADE_WAIT_MAX_SECONDS", 60, minimum=0)
# Long-polls one token may hold at once (each holds a web worker); more answer at once.
SPECLOOM_GRADE_MAX_WAITING = env_int("SPECLOOM_GRADE_MAX_WAITING", 4, minimum=0)

LLM_BASE_URL = env_str("SPECLOOM_LLM_BASE_URL", "")
LLM_MODEL = env_str("SPECLOOM_LLM_MODEL", "")
LLM_API_KEY = env_str("SPECLOOM_LLM_API_KEY", "")
LLM_TIMEOUT_SECONDS = env_int("SPECLOOM_LLM_TIMEOUT_SECONDS", 120, minimum=1)

# Calibration of the review agent against human decisions (workers/audit/calibration.py): below
# this many decisions a row's verdict is "not enough decisions"; intervals are a seeded
# bootstrap of this many resamples, so the same decisions always give the same figures.
CALIBRATION_MIN_DECISIONS = env_int("SPECLOOM_CALIBRATION_MIN_DECISIONS", 30, minimum=1)
CALIBRATION_RESAMPLES = env_int("SPECLOOM_CALIBRATION_RESAMPLES", 2000, minimum=100)
CALIBRATION_SEED = env_int("SPECLOOM_CALIBRATION_SEED", 19, minimum=0)

# --- Jobs and Celery -------------------------------------------------------------------------
JOB_LEASE_SECONDS = env_int("SPECLOOM_JOB_LEASE_SECONDS", 60, minimum=2)
JOB_MAX_ATTEMPTS = env_int("SPECLOOM_JOB_MAX_ATTEMPTS", 3, minimum=1)
JOB_REAP_INTERVAL_SECONDS = env_int("SPECLOOM_JOB_REAP_INTERVAL_SECONDS", 30, minimum=1)
# A queued job whose message has not been picked up for this long gets its message sent again
# (the broker may have lost it); claiming is conditional, so a duplicate is harmless.
JOB_REQUEUE_STALE_SECONDS = env_int("SPECLOOM_JOB_REQUEUE_STALE_SECONDS", 300, minimum=1)
JOB_SOFT_TIME_LIMIT = env_int("SPECLOOM_JOB_SOFT_TIME_LIMIT", 3 * 3600, minimum=1)
JOB_HARD_TIME_LIMIT = JOB_SOFT_TIME_LIMIT + 300

BROKER_DIR = VAR_DIR / "broker"
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        # Above the longest job, or Redis would hand an unacknowledged message to a second worker.
        "visibility_timeout": JOB_HARD_TIME_LIMIT + 600,
    }
else:
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
    }
    # kombu's filesystem transport expects its folders to exist.
    for _folder in ("queue", "control"):
        os.makedirs(BROKER_DIR / _folder, exist_ok=True)
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = JOB_SOFT_TIME_LIMIT
CELERY_TASK_TIME_LIMIT = JOB_HARD_TIME_LIMIT
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_CREATE_MISSING_QUEUES = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_BEAT_SCHEDULE = {
    "reap-expired-jobs": {
        "task": "workers.reap_jobs",
        "schedule": float(JOB_REAP_INTERVAL_SECONDS),
    },
    "expire-review-leases": {
        "task": "review.expire_leases",
        "schedule": 60.0,
    },
    "sweep-sandbox": {
        "task": "workers.sweep_sandbox",
        "schedule": float(SPECLOOM_SANDBOX_SWEEP_SECONDS),
    },
}
# Task modules outside workers/ that the worker must know (beat sends them by name).
CELERY_IMPORTS = ["review.tasks"]

# --- Review ------------------------------------------------------------------------------------
# A reviewer's lease on a task: renewed by the open page every REVIEW_HEARTBEAT_SECONDS, it
# expires (and frees the review slot) this long after the page stops renewing it.
REVIEW_LEASE_SECONDS = env_int("SPECLOOM_REVIEW_LEASE_SECONDS", 300, minimum=30)
REVIEW_HEARTBEAT_SECONDS = env_int("SPECLOOM_REVIEW_HEARTBEAT_SECONDS", 30, minimum=1)

# --- Auth, API -------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    # First: it refuses a locked-out username + address before a password is even checked.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Login throttling (django-axes): after SPECLOOM_LOGIN_FAILURE_LIMIT wrong passwords for one
# username from one address, that pair is refused (429) for SPECLOOM_LOGIN_COOLOFF_MINUTES;
# other users, and the same user elsewhere, are not affected. A successful login clears the
# count; an admin unlocks early by deleting the "access attempts" in the admin (or
# `manage.py axes_reset`). The address is REMOTE_ADDR: behind a proxy, every client shares it.
AXES_ENABLED = env_bool("SPECLOOM_LOGIN_THROTTLING", True)
AXES_FAILURE_LIMIT = env_int("SPECLOOM_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("SPECLOOM_LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard"
LOGOUT_REDIRECT_URL = "login"

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "curation.api.pagination.IdCursorPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": ["curation.api.filters.StrictFilterBackend"],
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "curation.api.auth.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["curation.api.permissions.RoleAndScopePermission"],
    "EXCEPTION_HANDLER": "curation.api.errors.error_handler",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        "curation.api.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    # `?format=` names an export format (specloom, swebench, parquet), not a DRF renderer.
    "URL_FORMAT_OVERRIDE": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Specloom API",
    "DESCRIPTION": "Tasks of interdependent specifications, trajectories, reviews and releases.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Swagger UI from the vendored sidecar package: no CDN, works offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # The schema and its UI need a role, like every other endpoint.
    "SERVE_PERMISSIONS": ["curation.api.permissions.RoleAndScopePermission"],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "curation.api.schema.add_error_responses",
    ],
    "ENUM_NAME_OVERRIDES": {
        "SpecKindEnum": "curation.models.SpecKind",
        "ReleaseStatusEnum": "curation.models.Release.Status",
        "RepositoryStatusEnum": "curation.models.RepositoryStatus",
    },
}
API_FAILED_AUTH_LIMIT = env_int("SPECLOOM_API_FAILED_AUTH_LIMIT", 20, minimum=1)
API_FAILED_AUTH_WINDOW_SECONDS = env_int("SPECLOOM_API_FAILED_AUTH_WINDOW_SECONDS", 300, minimum=1)

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Security --------------------------------------------------------------------------------
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from the page, not the cookie
CSRF_FAILURE_VIEW = "curation.api.errors.csrf_failure"  # the API's error body under /api/
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
if PRODUCTION:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "INFO"},
        # django-axes logs every successful login at INFO; failures and lockouts are warnings.
        "axes": {"level": "WARNING"},
    },
}

os.makedirs(STATIC_ROOT, exist_ok=True)
# The application's own files: readable by its user alone (the jail's user least of all).
for _private in (VAR_DIR, STORAGE_ROOT, BROKER_DIR, VAR_DIR / "cache"):
    private_folder(_private)
