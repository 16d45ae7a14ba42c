"""The configured sandbox backend of this process, from settings (the engine takes plain values)."""

from __future__ import annotations

import functools

from django.conf import settings

from workers.sandbox import Backend, get_backend


@functools.cache
def sandbox_backend() -> Backend:
    """One backend per process: it caches environments and serialises their builds."""
    options = {}
    if settings.SPECLOOM_SANDBOX_BACKEND == "process":
        options = {
            "cgroup_parent": settings.SPECLOOM_CGROUP_PARENT,
            "jail_user": settings.SPECLOOM_JAIL_USER,
            "warm_jails": settings.SPECLOOM_SANDBOX_WARM_JAILS,
            "warm_jails_total": settings.SPECLOOM_SANDBOX_WARM_JAILS_TOTAL,
        }
    elif settings.SPECLOOM_SANDBOX_BACKEND == "docker":
        options = {"image_prefix": settings.SPECLOOM_IMAGE_PREFIX}
    return get_backend(
        settings.SPECLOOM_SANDBOX_BACKEND, root=settings.SPECLOOM_SANDBOX_ROOT, **options
    )


def sandbox_sweep() -> dict:
    """Kill and remove what dead workers left in the sandbox (run cgroups, run folders)."""
    backend = sandbox_backend()
    sweep = getattr(backend, "sweep", None)
    return sweep() if sweep is not None else {}
