"""Where a git URL given in the browser or over the API may lead: public hosts only.

A curator's URL is fetched by the server, which sits next to the database, Redis and whatever
else its network holds: a URL naming (or resolving to) an address inside that network would
make the server a proxy into it. The host is resolved once, every address must be global, and
git is pinned to exactly those addresses (curl's resolve list) with redirects off, so that
neither a second DNS answer nor a redirect can lead it elsewhere. Hosts an operator trusts (an
internal git server) are named in SPECLOOM_IMPORT_ALLOW_HOSTS.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

DEFAULT_PORTS = {"https": 443, "http": 80}


class UnsafeCloneSource(ValueError):
    """The URL leads somewhere the server must not fetch from; the message says why."""


def clone_pins(url: str, *, allowed_hosts: list[str]) -> list[str]:
    """git -c options that pin the URL's host to its public addresses (none for an allowed
    host). Raises UnsafeCloneSource for a host that is not public."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in DEFAULT_PORTS or not host:
        raise UnsafeCloneSource(f"only http(s) URLs with a host are cloned, not {scheme or url!r}")
    if _allowed(host, allowed_hosts):
        return []
    port = parts.port or DEFAULT_PORTS[scheme]
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise UnsafeCloneSource(f"cannot resolve {host}: {exc}") from None
    addresses = sorted({info[4][0] for info in infos})
    for address in addresses:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
        if not ip.is_global:
            raise UnsafeCloneSource(
                f"{host} resolves to {address}, an address inside the server's network: imports "
                "from the browser and the API clone from public hosts only (an operator can "
                "allow a host with SPECLOOM_IMPORT_ALLOW_HOSTS)"
            )
    shown = ",".join(f"[{a}]" if ":" in a else a for a in addresses)
    return ["-c", "http.followRedirects=false", "-c", f"http.curloptResolve={host}:{port}:{shown}"]


def _allowed(host: str, allowed_hosts: list[str]) -> bool:
    for pattern in (entry.strip().lower() for entry in allowed_hosts):
        if not pattern:
            continue
        if host == pattern or (pattern.startswith(".") and host.endswith(pattern)):
            return True
    return False
