"""Content-Security-Policy with a per-request nonce.

Agent output and repository code are rendered on our pages; escaping is the first defence and
this header is the second: no inline script runs unless it carries this request's nonce.
"""

from __future__ import annotations

import secrets


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.csp_nonce = secrets.token_urlsafe(16)
        response = self.get_response(request)
        if request.path.startswith("/api/docs/"):
            # drf-spectacular's Swagger page boots with an inline script that carries no nonce;
            # the page shows only our own schema, never agent or repository content.
            script_src = "'self' 'unsafe-inline'"
        else:
            script_src = f"'self' 'nonce-{request.csp_nonce}'"
        response.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; "
            f"script-src {script_src}; "
            "style-src 'self' 'unsafe-inline'; "
            "img-src 'self' data:; "
            "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
        )
        return response


def csp_nonce(request) -> dict:
    return {"csp_nonce": getattr(request, "csp_nonce", "")}
