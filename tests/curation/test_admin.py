"""Every admin changelist and change page loads, with data in it."""

import pytest
from django.contrib import admin
from django.urls import reverse

from curation.models import (
    Audit,
    EnvironmentRecipe,
    Evaluation,
    Finding,
    Grade,
    GradeSpecResult,
    GradeSubmission,
    Release,
    SpecResult,
    TaskRevision,
    TrajectoryStep,
)
from review.models import Comment, Review, ReviewAssignment
from tests.factories import (
    SpecDependencyFactory,
    TestCaseFactory,
    TrajectoryFactory,
    UserFactory,
)
from workers.models import Job

pytestmark = pytest.mark.django_db


@pytest.fixture
def one_of_everything(django_user_model):
    from django.utils import timezone

    from curation.models import ApiToken

    dependency = SpecDependencyFactory()
    task = dependency.task
    test = TestCaseFactory(task=task)
    test.specs.add(dependency.from_spec)
    trajectory = TrajectoryFactory(task=task)
    TrajectoryStep.objects.create(trajectory=trajectory, index=0, role="assistant", content="hi")
    evaluation = Evaluation.objects.create(trajectory=trajectory, task_revision=1, resolved="none")
    SpecResult.objects.create(evaluation=evaluation, spec=dependency.from_spec, satisfied=False)
    audit = Audit.objects.create(task=task, task_revision=1)
    Finding.objects.create(task=task, kind="weak_test", message="empty patch passes", audit=audit)
    TaskRevision.objects.create(task=task, revision=1, changes={})
    Release.objects.create(dataset=task.dataset, version="v1")
    reviewer = UserFactory(username="rev", roles=["reviewer"])
    assignment = ReviewAssignment.objects.create(
        task=task, reviewer=reviewer, expires_at=timezone.now()
    )
    Review.objects.create(
        task=task,
        reviewer=reviewer,
        assignment=assignment,
        task_revision=1,
        decision="approve",
        spec_clarity=0,
        test_validity=0,
        interdependency=1,
        difficulty="<15m",
    )
    Comment.objects.create(task=task, author=reviewer, body="hm", task_revision=1)
    Job.objects.create(kind="echo", target_type=None)
    ApiToken.objects.create(user=reviewer, name="ci", prefix="abc", key_sha256="0" * 64)
    EnvironmentRecipe.objects.create(
        repository=task.repository, commit=task.repository.default_commit or "0" * 40
    )
    # django-axes's records of logins (its admin is where a locked user is unlocked).
    from axes.models import AccessAttempt, AccessFailureLog, AccessLog

    where = {"user_agent": "ua", "ip_address": "203.0.113.7", "username": "rev", "path_info": "/"}
    AccessAttempt.objects.create(**where, get_data="", post_data="", failures_since_start=1)
    AccessFailureLog.objects.create(**where, locked_out=False)
    AccessLog.objects.create(**where)
    grade = Grade.objects.create(task=task, task_revision=1, patch_sha256="0" * 64)
    GradeSubmission.objects.create(grade=grade, model_name="m", user=reviewer)
    GradeSpecResult.objects.create(grade=grade, spec=dependency.from_spec, satisfied=True)


def test_every_changelist_and_change_page_loads(admin_client, one_of_everything):
    for model in admin.site._registry:
        meta = model._meta
        changelist = reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
        response = admin_client.get(changelist)
        assert response.status_code == 200, changelist
        response = admin_client.get(changelist, {"q": "x"})
        assert response.status_code == 200, f"search on {changelist}"
        obj = model.objects.first()
        assert obj is not None, f"no {meta.model_name} to open"
        change = reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[obj.pk])
        assert admin_client.get(change).status_code == 200, change


def test_a_reviewer_cannot_open_the_admin(client, alice):
    client.force_login(alice)
    response = client.get("/admin/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_a_recipe_edited_in_the_admin_is_validated_and_becomes_the_curators(
    admin_client, one_of_everything
):
    recipe = EnvironmentRecipe.objects.get()
    change = reverse("admin:curation_environmentrecipe_change", args=[recipe.pk])
    refused = admin_client.post(change, {"recipe": '{"packages": ["x @ file:///etc"]}'})
    assert refused.status_code == 200
    assert "requirements by URL or path are not fetched" in refused.content.decode()
    saved = admin_client.post(change, {"recipe": '{"install": ".", "packages": ["six"]}'})
    assert saved.status_code == 302
    recipe.refresh_from_db()
    assert recipe.source == "curator" and recipe.recipe["packages"] == ["six"]
    assert Job.objects.filter(kind="prepare_environment").exists()


def test_the_admin_adds_no_repository_rows_and_links_to_the_import_page(admin_client):
    assert admin_client.get("/admin/curation/repository/add/").status_code == 403
    changelist = admin_client.get("/admin/curation/repository/").content.decode()
    assert 'href="/repositories/"' in changelist
    assert "Import repositories" in changelist


def test_the_admins_synthesis_refuses_a_repository_that_is_not_imported(admin_client):
    from curation.models import Repository
    from tests.factories import DatasetFactory, RepositoryFactory

    pending = RepositoryFactory(name="pending", status="queued", git_path="", default_commit="")
    dataset = DatasetFactory(name="d")
    response = admin_client.post(
        "/admin/curation/repository/",
        {
            "action": "synthesize_tasks",
            "_selected_action": [pending.pk],
            "apply": "1",
            "dataset": dataset.pk,
            "engine": "procedural",
            "count": 1,
            "seed": 0,
        },
        follow=True,
    )
    assert "repository &#x27;pending&#x27; is not imported: its import has not finished" in (
        response.content.decode()
    )
    assert not Job.objects.filter(kind="synthesize").exists()
    assert Repository.objects.count() == 1


def test_a_repositorys_upstream_and_environment_version_are_set_in_the_admin(admin_client):
    from curation.exports.records import environment_version, upstream_name
    from curation.models import Repository
    from tests.factories import RepositoryFactory

    repository = RepositoryFactory(name="ledger")
    assert upstream_name(repository) == "specloom/ledger"
    url = reverse("admin:curation_repository_change", args=[repository.pk])
    page = admin_client.get(url)
    assert b'name="upstream"' in page.content and b'name="environment_version"' in page.content
    form = {
        "name": "ledger",
        "source_kind": "path",
        "source": "/nowhere",
        "language": "python",
        "setup_command": "pip install .",
        "test_command": "pytest",
        "environment": "{}",
        "upstream": "acme/ledger",
        "environment_version": "2.1",
    }
    response = admin_client.post(url, form)
    assert response.status_code == 302, response.content[:2000]
    repository = Repository.objects.get(pk=repository.pk)
    assert (upstream_name(repository), environment_version(repository)) == ("acme/ledger", "2.1")
