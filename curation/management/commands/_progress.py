"""A text progress bar that follows Job rows until they finish (for --wait)."""

from __future__ import annotations

import time

from workers.models import Job


def follow_jobs(stdout, job_ids: list[int], *, poll: float = 0.5, width: int = 30) -> list[Job]:
    """Draw one bar per job until all are finished; return the finished jobs."""
    shown: dict[int, str] = {}
    while True:
        jobs = list(Job.objects.filter(pk__in=job_ids).order_by("pk"))
        for job in jobs:
            filled = int(width * job.progress / 100)
            line = (
                f"job {job.pk} [{'#' * filled}{'.' * (width - filled)}] {job.progress:3d}% "
                f"{job.status}: {job.message[:70]}"
            )
            if shown.get(job.pk) != line:
                stdout.write(line)
                shown[job.pk] = line
        if all(job.is_finished for job in jobs):
            return jobs
        time.sleep(poll)
