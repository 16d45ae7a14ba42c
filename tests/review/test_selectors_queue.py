"""review.selectors.queue on real rows: filters, keyset pages, per-row counts, the blind sample."""

import pytest
from django.http import QueryDict

from curation.models import Finding, Specification, Task
from review.selectors.queue import BadCursor, QueueFilters, queue_choices, queue_page
from tests.factories import DatasetFactory, SpecificationFactory, TaskFactory, TestCaseFactory

pytestmark = pytest.mark.django_db


def _filters(**params) -> QueueFilters:
    query = QueryDict(mutable=True)
    query.update(params)
    return QueueFilters.from_query(query)


def test_filters_drop_values_that_name_nothing():
    filters = _filters(status="nope", origin="alien", difficulty="eons", findings="maybe", sort="x")
    assert (filters.status, filters.origin, filters.difficulty, filters.findings) == ("",) * 4
    assert filters.sort == "oldest" and not filters.active
    kept = _filters(status="needs_review", difficulty="none", q="  anchors ")
    assert (kept.status, kept.difficulty, kept.q) == ("needs_review", "none", "anchors")
    assert kept.active and kept.query() == "status=needs_review&difficulty=none&q=anchors"


def test_pages_follow_the_cursor_without_gaps_or_repeats(dataset, alice):
    made = [TaskFactory(dataset=dataset).pk for _ in range(5)]
    TaskFactory()  # another dataset's: alice never sees it
    seen, cursor = [], ""
    while True:
        page = queue_page(user=alice, filters=_filters(cursor=cursor), limit=2)
        seen += [t.pk for t in page.rows]
        cursor = page.next_cursor
        if not cursor:
            break
    assert seen == made
    newest = queue_page(user=alice, filters=_filters(sort="newest"), limit=3)
    assert [t.pk for t in newest.rows] == made[::-1][:3]
    rest = queue_page(user=alice, filters=_filters(sort="newest", cursor=newest.next_cursor))
    assert [t.pk for t in rest.rows] == made[::-1][3:] and rest.next_cursor == ""


def test_a_forged_cursor_is_refused(dataset, alice):
    with pytest.raises(BadCursor):
        queue_page(user=alice, filters=_filters(cursor="not-a-cursor"))


def test_rows_count_verified_specs_tests_and_live_findings(dataset, alice):
    task = TaskFactory(dataset=dataset)
    SpecificationFactory(task=task, key="S1", verified=True)
    SpecificationFactory(task=task, key="S2", verified=False)
    TestCaseFactory(task=task)
    Finding.objects.create(task=task, kind=Finding.Kind.FLAKY, severity="high", message="a")
    Finding.objects.create(
        task=task, kind=Finding.Kind.FLAKY, severity="high", message="b", dismissed=True
    )
    (row,) = queue_page(user=alice, filters=_filters()).rows
    assert (row.spec_count, row.test_count, row.finding_count, row.review_count) == (1, 1, 1, 0)
    assert Specification.objects.filter(task=task).count() == 2


def test_filters_narrow_the_rows(dataset, alice):
    flagged = TaskFactory(
        dataset=dataset, title="Unique anchors", difficulty="15m-1h", instance_id="specloom__a-a"
    )
    Finding.objects.create(task=flagged, kind=Finding.Kind.FLAKY, severity="low", message="x")
    plain = TaskFactory(
        dataset=dataset,
        status=Task.Status.DRAFT,
        origin=Task.Origin.LLM,
        instance_id="specloom__b-b",
    )

    def pks(**params):
        return [t.pk for t in queue_page(user=alice, filters=_filters(**params)).rows]

    assert pks(findings="yes") == [flagged.pk] and pks(findings="no") == [plain.pk]
    assert pks(status="draft") == [plain.pk] and pks(origin="llm") == [plain.pk]
    assert pks(q="unique anch") == [flagged.pk] and pks(q=str(plain.pk)) == [plain.pk]
    assert pks(q="__b-") == [plain.pk]
    assert pks(difficulty="15m-1h") == [flagged.pk] and pks(difficulty="none") == [plain.pk]
    assert pks(repository=plain.repository.name) == [plain.pk]


def test_the_blind_sample_hides_finding_counts_from_reviewers_only(alice, bob):
    blind = DatasetFactory(name="blind", blind_review_share=100)
    blind.members.add(alice)
    task = TaskFactory(dataset=blind)
    Finding.objects.create(task=task, kind=Finding.Kind.FLAKY, severity="low", message="x")
    assert queue_page(user=alice, filters=_filters()).findings_hidden == {task.pk}
    assert queue_page(user=bob, filters=_filters()).findings_hidden == set()
    # Nor does filtering by findings tell a reviewer which blind tasks have some.
    assert queue_page(user=alice, filters=_filters(findings="yes")).rows == []
    assert [t.pk for t in queue_page(user=bob, filters=_filters(findings="yes")).rows] == [task.pk]


def test_choices_list_only_visible_datasets(dataset, alice):
    DatasetFactory(name="elsewhere")
    choices = queue_choices(user=alice)
    assert choices["datasets"] == ["core"]
    assert [value for value, _ in choices["statuses"]] == Task.Status.values
