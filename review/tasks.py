"""Thin Celery tasks of the review app."""

from celery import shared_task


@shared_task(name="review.expire_leases", acks_late=True)
def expire_leases() -> int:
    from review.services import review_leases_expire

    return review_leases_expire()
