"""Save-time gates on a task's content, on every path that saves one (service, web form, API
POST and PATCH, admin), and the approval gate that catches tasks stored before the gates.

- an empty, blank or oversized problem statement is refused with a message;
- a reference or test patch whose Python files do not compile is refused with file, line, error.
"""

import pytest
from django.urls import reverse

from curation.models import Task
from curation.services.editing import task_update_content
from curation.services.tasks import TaskInputError, statement_problem
from review import services
from tests.curation.tasks_fixtures import FIXTURES, hand_made_task, sample_repository
from tests.curation.test_admin_tasks import _add_form
from tests.review.scenario import rich_task

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
BIG = "x" * (64 * 1024 + 1)
BAD_STATEMENTS = [("", "is empty"), ("  \n\t ", "is empty"), (BIG, "65,537 bytes")]
TESTS_PATCH = (FIXTURES / "marktext_toc" / "tests.patch").read_text()
BROKEN_TESTS = TESTS_PATCH.replace(
    "+def test_heading_anchors_are_unique():", "+def test_heading_anchors_are_unique(:"
)
REFERENCE = (FIXTURES / "marktext_toc" / "reference.patch").read_text()


@pytest.fixture
def stored(dataset, repo_storage):
    """A task on the real marktext repository (its patches are checked against the base)."""
    return hand_made_task("marktext_toc", dataset=dataset)


# --- the rule ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "says"), BAD_STATEMENTS)
def test_the_rule_names_what_is_wrong_with_a_statement(text, says):
    assert says in statement_problem(text)


def test_the_limit_is_a_setting(settings):
    settings.SPECLOOM_STATEMENT_MAX_BYTES = 10
    assert "11 bytes; the limit is 10 bytes" in statement_problem("é" * 5 + "x")
    assert statement_problem("é" * 5) == ""


# --- service paths -------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "says"), BAD_STATEMENTS)
def test_creating_a_task_refuses_a_bad_statement(dataset, repo_storage, text, says):
    with pytest.raises(TaskInputError, match=says):
        hand_made_task_with(dataset, problem_statement=text)
    assert not Task.objects.exists()


def hand_made_task_with(dataset, **overrides):
    import json

    from curation.services.tasks import task_create
    from workers import gitstore

    folder = FIXTURES / "marktext_toc"
    spec = json.loads((folder / "task.json").read_text())
    repository = sample_repository("marktext")
    base = gitstore.commit_patch(
        repository.git_dir, repository.default_commit, (folder / "base.patch").read_text(), "b"
    )
    values = {
        "problem_statement": spec["problem_statement"],
        "reference_patch": REFERENCE,
        "test_patch": TESTS_PATCH,
        **overrides,
    }
    return task_create(
        repository=repository,
        dataset=dataset,
        title=spec["title"],
        base_commit=base,
        specs=spec["specs"],
        tests=spec["tests"],
        **values,
    )


def test_creating_a_task_refuses_a_test_patch_that_does_not_compile(dataset, repo_storage):
    with pytest.raises(TaskInputError) as caught:
        hand_made_task_with(dataset, test_patch=BROKEN_TESTS)
    message = str(caught.value)
    assert message.startswith("the test patch does not compile: tests/test_toc_spec.py, line 37")
    assert "invalid syntax" in message or "never closed" in message


def test_creating_a_task_refuses_a_reference_patch_that_does_not_compile(dataset, repo_storage):
    # A modified file: it is compiled as the patch leaves it, from the real base commit.
    broken = REFERENCE.replace('+    base = slug or "section"', '+    base = slug or ("section"', 1)
    assert broken != REFERENCE
    with pytest.raises(TaskInputError, match=r"the reference patch does not compile: marktext/"):
        hand_made_task_with(dataset, reference_patch=broken)


@pytest.mark.parametrize(("text", "says"), BAD_STATEMENTS)
def test_editing_refuses_a_bad_statement(stored, alice, text, says):
    with pytest.raises(TaskInputError, match=says):
        task_update_content(
            task=stored, user=alice, expected_revision=1, changes={"problem_statement": text}
        )
    stored.refresh_from_db()
    assert stored.revision == 1


def test_editing_refuses_a_test_patch_that_does_not_compile(stored, alice):
    with pytest.raises(TaskInputError, match=r"tests/test_toc_spec\.py, line 37"):
        task_update_content(
            task=stored, user=alice, expected_revision=1, changes={"test_patch": BROKEN_TESTS}
        )


def test_editing_a_title_of_a_task_with_an_old_bad_statement_still_works(stored, alice):
    """The gate is on what changes; the approval gate stops the old statement."""
    Task.objects.filter(pk=stored.pk).update(problem_statement="")
    stored.refresh_from_db()
    result = task_update_content(
        task=stored, user=alice, expected_revision=1, changes={"title": "Renamed"}
    )
    assert result.changed


# --- the web form --------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "says"), BAD_STATEMENTS)
def test_the_statement_form_refuses_a_bad_statement_with_a_message(
    client, alice, stored, text, says
):
    Task.objects.filter(pk=stored.pk).update(status=Task.Status.NEEDS_REVIEW)
    services.review_claim(task=stored, user=alice)
    client.force_login(alice)
    response = client.post(
        reverse("review-task-edit", args=[stored.pk, "statement"]),
        {"title": "T", "problem_statement": text, "revision": 1},
        **HTMX,
    )
    assert response.status_code == 400
    assert says in response.content.decode()
    stored.refresh_from_db()
    assert stored.revision == 1


def test_the_patch_form_refuses_a_test_patch_that_does_not_compile(client, bob, stored):
    client.force_login(bob)
    response = client.post(
        reverse("review-task-edit", args=[stored.pk, "test_patch"]),
        {"patch": BROKEN_TESTS, "revision": 1},
        **HTMX,
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "does not compile: tests/test_toc_spec.py, line 37" in html


# --- the admin -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "says"), BAD_STATEMENTS)
def test_the_admin_refuses_a_bad_statement(admin_client, repo_storage, dataset, text, says):
    repository = sample_repository("marktext")
    response = admin_client.post(
        reverse("admin:curation_task_add"), _add_form(repository, dataset, problem_statement=text)
    )
    assert response.status_code == 200
    assert says in response.content.decode()
    assert not Task.objects.exists()


def test_the_admin_refuses_a_test_patch_that_does_not_compile(admin_client, repo_storage, dataset):
    repository = sample_repository("marktext")
    response = admin_client.post(
        reverse("admin:curation_task_add"), _add_form(repository, dataset, test_patch=BROKEN_TESTS)
    )
    assert response.status_code == 200
    assert "tests/test_toc_spec.py, line 37" in response.content.decode()
    assert not Task.objects.exists()


# --- approval ------------------------------------------------------------------------------------


def _rubric(decision="approve"):
    return services.RubricInput(
        decision, 0, 0, 0, "15m-1h", "fine" if decision != "approve" else ""
    )


@pytest.mark.parametrize(("text", "says"), BAD_STATEMENTS)
def test_a_task_with_a_bad_statement_can_never_be_approved(client, alice, dataset, text, says):
    task = rich_task(dataset=dataset)
    Task.objects.filter(pk=task.pk).update(problem_statement=text)
    services.review_claim(task=task, user=alice)
    with pytest.raises(services.NotApprovable, match=says):
        services.review_submit(task=task, user=alice, rubric=_rubric(), expected_revision=1)
    task.refresh_from_db()
    assert task.status == Task.Status.NEEDS_REVIEW
    client.force_login(alice)
    page = client.get(reverse("review-task", args=[task.pk])).content.decode()
    assert f"Approve is refused: {says}" in page or "Approve is refused: the problem" in page
    assert 'data-decision="approve" disabled' in page


def test_a_majority_cannot_approve_a_task_with_a_bad_statement(dataset, alice, bob):
    from tests.factories import UserFactory

    frank = UserFactory(username="frank", roles=["reviewer"])
    dataset.members.add(frank)
    dataset.reviews_required = 3
    dataset.consensus = "majority"
    dataset.save()
    task = rich_task(dataset=dataset)
    for person in (alice, frank):
        services.review_claim(task=task, user=person)
        services.review_submit(task=task, user=person, rubric=_rubric(), expected_revision=1)
    Task.objects.filter(pk=task.pk).update(problem_statement=" ")
    services.review_claim(task=task, user=bob)
    # The third review makes a majority for "approve": it goes to a curator instead.
    outcome = services.review_submit(
        task=task, user=bob, rubric=_rubric("reject"), expected_revision=1
    )
    assert outcome.final_status is None and outcome.adjudication is not None
    assert "cannot be approved: the problem statement is empty" in outcome.adjudication.reason
    task.refresh_from_db()
    assert task.status != Task.Status.APPROVED
    # The curator cannot approve it either.
    with pytest.raises(services.NotApprovable):
        services.review_adjudicate(adjudication=outcome.adjudication, user=bob, rubric=_rubric())
