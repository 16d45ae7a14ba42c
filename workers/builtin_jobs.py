"""Harmless job kinds that exercise the job machinery end to end (and the demo's dashboard)."""

from __future__ import annotations

import time
from pathlib import Path

from workers.registry import job_handler


@job_handler("echo")
def echo(job, ctx) -> dict:
    ctx.log(f"echo: {job.params!r}")
    return {"echo": job.params, "message": "echoed"}


@job_handler("sleep")
def sleep(job, ctx) -> dict:
    """Sleep `seconds` in steps, reporting progress; optionally append a line to `marker_file`.

    The marker file lets tests count how many times a job *completed*, across worker processes.
    """
    seconds = float(job.params.get("seconds", 1))
    steps = max(1, int(job.params.get("steps", 10)))
    for step in range(steps):
        time.sleep(seconds / steps)
        ctx.progress(int(100 * (step + 1) / steps), f"slept {step + 1}/{steps}")
    marker = job.params.get("marker_file")
    if marker:
        with Path(marker).open("a") as handle:
            handle.write(f"{job.pk} {job.attempts} {job.worker}\n")
    return {"slept": seconds, "message": f"slept {seconds:g}s"}
