"""factory_boy factories for the domain. Tests build what they need, nothing more."""

from __future__ import annotations

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from curation.models import (
    Dataset,
    Repository,
    SpecDependency,
    Specification,
    Task,
    TestCase,
    Trajectory,
)


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.com")
    password = factory.django.Password("correct horse battery staple")

    @factory.post_generation
    def roles(self, create, extracted, **kwargs):
        for name in extracted or ():
            self.groups.add(Group.objects.get(name=name))


class RepositoryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Repository

    name = factory.Sequence(lambda n: f"repo-{n}")
    source_kind = Repository.SourceKind.PATH
    source = "/nowhere"
    git_path = factory.LazyAttribute(lambda r: f"repos/{r.name}.git")
    default_commit = "0" * 40


class DatasetFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Dataset
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"dataset-{n}")


class TaskFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Task

    repository = factory.SubFactory(RepositoryFactory)
    dataset = factory.SubFactory(DatasetFactory)
    number = factory.Sequence(lambda n: n + 1)
    instance_id = factory.LazyAttribute(lambda t: f"specloom__{t.repository.name}-{t.number}")
    base_commit = "0" * 40
    title = factory.Sequence(lambda n: f"Task {n}")
    problem_statement = "Implement the thing."
    status = Task.Status.NEEDS_REVIEW
    origin = Task.Origin.MANUAL


class SpecificationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Specification

    task = factory.SubFactory(TaskFactory)
    key = factory.Sequence(lambda n: f"S{n + 1}")
    kind = Specification.Kind.FUNCTIONAL
    statement = "It works."


class SpecDependencyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SpecDependency

    task = factory.SubFactory(TaskFactory)
    from_spec = factory.SubFactory(SpecificationFactory, task=factory.SelfAttribute("..task"))
    to_spec = factory.SubFactory(SpecificationFactory, task=factory.SelfAttribute("..task"))
    evidence = SpecDependency.Evidence.DECLARED


class TestCaseFactory(factory.django.DjangoModelFactory):
    __test__ = False

    class Meta:
        model = TestCase

    task = factory.SubFactory(TaskFactory)
    nodeid = factory.Sequence(lambda n: f"tests/test_x.py::test_{n}")
    intended_role = TestCase.Intent.FAIL_TO_PASS


class TrajectoryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Trajectory

    task = factory.SubFactory(TaskFactory)
    model_name = "model-a"
    source_format = "specloom"
    content_sha256 = factory.Sequence(lambda n: f"{n:064x}")
