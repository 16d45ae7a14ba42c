"""What Django's debug pages may show, when DEBUG is on (never by default)."""

from __future__ import annotations

import re

from django.views.debug import SafeExceptionReporterFilter


class SettingsHidingFilter(SafeExceptionReporterFilter):
    """Django's filter hides settings and request headers named like secrets (KEY, TOKEN,
    PASS...); connection URLs are secrets too: `postgres://user:password@host/db`. The same
    pattern cleans the request's environment, where runserver puts every variable."""

    hidden_settings = re.compile(
        "API|TOKEN|KEY|SECRET|PASS|SIGNATURE|HTTP_COOKIE|URL|DATABASE|REDIS|BROKER|CACHE|DSN",
        flags=re.IGNORECASE,
    )
