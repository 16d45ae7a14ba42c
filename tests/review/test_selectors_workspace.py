"""review.selectors.workspace on real rows: what the task page shows about specs, tests and
comments travels in items beside the model rows, and who may edit or decide."""

import pytest

from curation.models import Task
from review import services
from review.models import Adjudication, Comment
from review.selectors import workspace
from review.selectors.workspace import (
    can_edit,
    comment_thread,
    neighbours,
    open_adjudication,
    task_workspace,
)
from tests.factories import TaskFactory, TestCaseFactory
from tests.review.scenario import rich_task

pytestmark = pytest.mark.django_db

UNIQUE = "tests/test_toc_spec.py::test_heading_anchors_are_unique"


@pytest.fixture
def task(dataset):
    return rich_task(dataset=dataset)


def test_spec_items_carry_edges_and_the_tests_that_verify_them(task, alice):
    w = task_workspace(task=task, user=alice)
    items = {item.spec.key: item for item in w.spec_items}
    assert [s.key for s in w.specs] == ["S1", "S2", "S3"] == list(items)

    def targets(edges, end):
        return sorted(e[end] for e in edges)

    assert targets(items["S1"].depends_on, "to") == ["S2"]
    assert targets(items["S1"].used_by, "from") == ["S3"]
    assert targets(items["S2"].used_by, "from") == ["S1", "S3"] and not items["S2"].depends_on
    assert targets(items["S3"].depends_on, "to") == ["S1", "S2"]
    s1_s2 = items["S1"].depends_on[0]
    assert s1_s2["declared"] and s1_s2["observed"] and "unique_slug" in s1_s2["detail"]

    def verified(key):
        return sorted(t.nodeid.rsplit("::", 1)[-1] for t in items[key].verified_by)

    assert verified("S1") == ["test_toc_nests_headings_and_numbers_repeated_anchors"]
    assert len(items["S2"].verified_by) == 3 and len(items["S3"].verified_by) == 2
    assert w.specs_verified == 3 and w.specs_unverified == 0
    # The rows themselves are left as the database gave them.
    assert not any(hasattr(s, "depends_on") or hasattr(s, "verified_by") for s in w.specs)


def test_test_items_carry_spec_keys_and_the_source_from_the_test_patch(task, alice):
    w = task_workspace(task=task, user=alice)
    assert [i.test for i in w.test_items] == w.tests and len(w.tests) == 7
    items = {i.test.nodeid: i for i in w.test_items}
    unique = items[UNIQUE]
    assert unique.spec_keys == ["S2"] and unique.source_from_patch
    first_line, first_html = unique.source_lines[0]
    assert first_line > 1 and "test_heading_anchors_are_unique" in str(first_html)
    assert items["tests/test_anchors.py::test_slugify_options"].spec_keys == []
    assert not any(hasattr(t, "source_lines") or hasattr(t, "spec_keys") for t in w.tests)


def test_a_test_missing_from_the_patch_shows_its_stored_copy(task):
    stray = TestCaseFactory(task=task, nodeid="tests/test_gone.py::test_gone", code="x = 1\n")
    assert workspace.test_code(task=task, test=stray) == ("x = 1\n", 1, False)
    source, first, from_patch = workspace.test_code(task=task, test=task.tests.get(nodeid=UNIQUE))
    assert from_patch and first > 1 and source.startswith("def test_heading_anchors_are_unique")


def test_comments_are_filed_under_what_they_are_on(task, alice):
    def comment(**kwargs):
        return services.comment_create(task=task, user=alice, body="b", **kwargs)

    on_spec = comment(anchor=Comment.Anchor.SPEC, spec_key="S2")
    on_test = comment(anchor=Comment.Anchor.TEST, test_id=task.tests.get(nodeid=UNIQUE).pk)
    on_line = comment(
        anchor=Comment.Anchor.PATCH_LINE,
        patch="reference",
        file_path="marktext/anchors.py",
        line=64,
    )
    on_task = comment(anchor=Comment.Anchor.TASK)
    w = task_workspace(task=task, user=alice)
    targets = {i.comment.pk: i.target for i in w.comment_items}
    assert targets == {
        on_spec.pk: "S2",
        on_test.pk: "test_heading_anchors_are_unique",
        on_line.pk: "marktext/anchors.py:64",
        on_task.pk: "",
    }
    assert next(i for i in w.spec_items if i.spec.key == "S2").comments == [on_spec]
    assert next(i for i in w.test_items if i.test.nodeid == UNIQUE).comments == [on_test]
    assert w.comments_by_line == {("reference", "marktext/anchors.py", 64): [on_line]}
    assert comment_thread(comment=on_spec) == [on_spec]
    again = comment(anchor=Comment.Anchor.SPEC, spec_key="S2")
    assert comment_thread(comment=on_spec) == [on_spec, again]


def test_the_matrix_counts_satisfied_specs_per_model(task, alice):
    w = task_workspace(task=task, user=alice)
    assert w.matrix_models == ["gpt-oss-20b", "qwen3-coder-30b"]
    assert w.matrix[("qwen3-coder-30b", "S1")]["state"] == "satisfied"
    assert w.matrix[("gpt-oss-20b", "S1")]["state"] == "not-satisfied"
    assert w.matrix[("gpt-oss-20b", "S2")] == {"total": 1, "satisfied": 1, "state": "satisfied"}


def test_editing_and_deciding_need_the_lease_or_the_curator_role(task, alice, bob):
    w = task_workspace(task=task, user=alice)
    assert not (w.can_edit or w.can_decide) and w.lease.assignment is None
    assert not can_edit(task=task, user=alice) and can_edit(task=task, user=bob)
    lease = services.review_claim(task=task, user=alice)
    w = task_workspace(task=Task.objects.get(pk=task.pk), user=alice)
    assert w.can_edit and w.can_decide and w.lease.assignment == lease
    assert w.lease.active_count == 1 and can_edit(task=task, user=alice)
    assert not w.can_adjudicate and w.approve_enabled
    curator = task_workspace(task=task, user=bob)
    assert curator.can_edit and not curator.can_decide and curator.lease.active_count == 1


def test_a_decided_task_is_frozen_even_for_curators(dataset, bob):
    approved = rich_task(dataset=dataset, status=Task.Status.APPROVED)
    assert not can_edit(task=approved, user=bob)
    assert not task_workspace(task=approved, user=bob).can_edit


def test_a_curator_may_adjudicate_an_open_disagreement(task, bob):
    assert open_adjudication(task=task) is None
    opened = Adjudication.objects.create(task=task, task_revision=task.revision)
    assert open_adjudication(task=task) == opened
    assert task_workspace(task=task, user=bob).can_adjudicate


def test_neighbours_are_the_previous_and_next_visible_tasks(dataset, alice):
    first, middle, last = (TaskFactory(dataset=dataset) for _ in range(3))
    TaskFactory()  # not alice's
    assert neighbours(task=middle, user=alice) == (first.pk, last.pk)
    assert neighbours(task=first, user=alice) == (None, middle.pk)
    assert neighbours(task=last, user=alice) == (middle.pk, None)


def test_a_statement_that_cannot_be_approved_disables_approve(task, alice):
    assert task_workspace(task=task, user=alice).approve_enabled
    Task.objects.filter(pk=task.pk).update(problem_statement="  ")
    w = task_workspace(task=Task.objects.get(pk=task.pk), user=alice)
    assert w.statement_problem == "the problem statement is empty" and not w.approve_enabled
