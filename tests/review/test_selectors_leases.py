"""review.selectors.leases: one answer to "do I hold this task", for every caller."""

import datetime as dt

import pytest
from django.utils import timezone

from review import services
from review.models import ReviewAssignment
from review.selectors.leases import active_assignment, lease_completed, lease_for
from tests.factories import DatasetFactory, TaskFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def task(dataset):
    dataset.reviews_required = 2
    dataset.save()
    return TaskFactory(dataset=dataset)


def test_the_active_assignment_is_the_users_own_active_lease(task, alice, dataset):
    other = UserFactory(username="eve", roles=["reviewer"])
    dataset.members.add(other)
    assert active_assignment(task=task, user=alice) is None
    theirs = services.review_claim(task=task, user=other)
    assert active_assignment(task=task, user=alice) is None
    mine = services.review_claim(task=task, user=alice)
    assert active_assignment(task=task, user=alice) == mine
    assert active_assignment(task=task, user=other) == theirs
    services.review_release(assignment=mine, user=alice)
    assert active_assignment(task=task, user=alice) is None


def test_an_expired_but_unswept_lease_still_counts_until_the_sweep(task, alice):
    mine = services.review_claim(task=task, user=alice)
    past = timezone.now() - dt.timedelta(seconds=1)
    ReviewAssignment.objects.filter(pk=mine.pk).update(expires_at=past)
    assert active_assignment(task=task, user=alice) == mine
    services.review_leases_expire()
    assert active_assignment(task=task, user=alice) is None


def test_lease_for_counts_slots(task, alice, bob):
    lease = lease_for(task, alice)
    assert (lease.assignment, lease.active_count, lease.required, lease.slots_left) == (
        None,
        0,
        2,
        2,
    )
    services.review_claim(task=task, user=alice)
    task.refresh_from_db()
    lease = lease_for(task, alice)
    assert lease.assignment is not None and lease.active_count == 1 and lease.slots_left == 1
    assert lease_for(task, bob).assignment is None and lease_for(task, bob).active_count == 1


def test_the_lease_length_and_heartbeat_come_from_settings(task, alice, settings):
    settings.REVIEW_LEASE_SECONDS = 120
    settings.REVIEW_HEARTBEAT_SECONDS = 7
    before = timezone.now()
    lease = services.review_claim(task=task, user=alice)
    assert dt.timedelta(seconds=119) <= lease.expires_at - before <= dt.timedelta(seconds=121)
    assert lease_for(task, alice).heartbeat_seconds == 7


def test_lease_completed_once_the_user_decided(alice):
    dataset = DatasetFactory(name="solo")
    dataset.members.add(alice)
    task = TaskFactory(dataset=dataset)
    lease = services.review_claim(task=task, user=alice)
    assert not lease_completed(task=task, user=alice)
    ReviewAssignment.objects.filter(pk=lease.pk).update(status=ReviewAssignment.Status.COMPLETED)
    assert lease_completed(task=task, user=alice)
    assert active_assignment(task=task, user=alice) is None
