"""The domain: repositories, tasks made of interdependent specifications, their tests,
trajectories and evaluations, review-agent findings, datasets and immutable releases.

One module per concern; this package is the app's model registry, so every model (and the
choices and helpers callers import with them) is re-exported here: `curation.models.Task` and
the migrations keep working whichever module defines it.
"""

from curation.models.datasets import Dataset, in_blind_sample
from curation.models.findings import Audit, Finding
from curation.models.grades import Grade, GradeSpecResult, GradeStatus, GradeSubmission
from curation.models.recipes import EnvironmentRecipe
from curation.models.releases import (
    Release,
    ReleaseImmutable,
    ReleaseQuerySet,
    ReleaseTask,
    ReleaseTaskQuerySet,
)
from curation.models.repositories import Repository, RepositoryStatus
from curation.models.tasks import (
    SpecDependency,
    Specification,
    SpecKind,
    Task,
    TaskDifficulty,
    TaskOrigin,
    TaskRevision,
    TaskStatus,
    TestCase,
    TestRole,
)
from curation.models.tokens import ApiToken
from curation.models.trajectories import Evaluation, SpecResult, Trajectory, TrajectoryStep

__all__ = [
    "ApiToken",
    "Audit",
    "Dataset",
    "EnvironmentRecipe",
    "Evaluation",
    "Finding",
    "Grade",
    "GradeSpecResult",
    "GradeStatus",
    "GradeSubmission",
    "Release",
    "ReleaseImmutable",
    "ReleaseQuerySet",
    "ReleaseTask",
    "ReleaseTaskQuerySet",
    "Repository",
    "RepositoryStatus",
    "SpecDependency",
    "SpecKind",
    "SpecResult",
    "Specification",
    "Task",
    "TaskDifficulty",
    "TaskOrigin",
    "TaskRevision",
    "TaskStatus",
    "TestCase",
    "TestRole",
    "Trajectory",
    "TrajectoryStep",
    "in_blind_sample",
]
