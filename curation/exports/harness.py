"""The SWE-bench harness fields of exported records: `image`, `eval_script`, `log_parser` and
`eval_type` (what swebench 5's `make_test_spec` reads besides the instance's own keys).

`records.task_records` attaches each record's environment here (`attach_harness`, one lookup
per repository per export); the fields are computed when a SWE-bench or Parquet row is written
(`harness_row`), once per record, so a Specloom-format export pays nothing for them. The
environment is the one every sandbox run of the repository uses (`runtime.environment_for`: its
recipe, or its own setup fields); the image is that environment at the task's base commit
(workers.sandbox.images), named under `SPECLOOM_IMAGE_PREFIX`; the script and the parser come
from workers.harness.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from curation import runtime
from curation.models import Repository
from workers.harness import EVAL_TYPE, LOG_PARSER, eval_script
from workers.sandbox.images import ImageError, ImageSpec, python_version_of
from workers.sandbox.types import EnvironmentSpec

HARNESS_KEYS = ("image", "eval_script", "log_parser", "eval_type")


@dataclass(frozen=True)
class HarnessEnvironment:
    """A repository's environment, as the records of its tasks need it."""

    environment: EnvironmentSpec
    python_version: str
    image_prefix: str
    git_dir: str = ""

    def image_spec(self, commit: str) -> ImageSpec:
        return ImageSpec(
            environment=self.environment, python_version=self.python_version, commit=commit
        )


def harness_environment(repository: Repository, *, recipe_row=None) -> HarnessEnvironment:
    spec = runtime.environment_for(repository, recipe_row=recipe_row)
    return HarnessEnvironment(
        environment=spec,
        python_version=python_version_of(spec),
        image_prefix=settings.SPECLOOM_IMAGE_PREFIX,
        git_dir=str(repository.git_dir),
    )


class RecordHarness:
    """What a record carries for the harness: its environment, and its fields once computed."""

    __slots__ = ("environment", "fields")

    def __init__(self, environment: HarnessEnvironment) -> None:
        self.environment = environment
        self.fields: dict[str, str] | None = None


def attach_harness(records: Iterable[Any], known: dict[str, HarnessEnvironment | None]) -> None:
    """Give each record (a records.TaskRecord) its repository's environment; `known` carries the
    environments already looked up from batch to batch."""
    records = list(records)
    missing = {record["repo"] for record in records} - set(known)
    if missing:
        repositories = list(Repository.objects.filter(name__in=missing))
        recipes = runtime.current_recipes(repositories)
        for repository in repositories:
            known[repository.name] = harness_environment(
                repository, recipe_row=recipes.get(repository.pk)
            )
    for record in records:
        environment = known.setdefault(record["repo"], None)
        record.harness = RecordHarness(environment) if environment is not None else None


def harness_row(record: Any) -> dict[str, str]:
    """The four harness fields of a record; {} for a record without an environment (a plain
    dict). Computed once and kept on the record: the SWE-bench and Parquet rows share it."""
    holder = getattr(record, "harness", None)
    if holder is None:
        return {}
    if holder.fields is not None:
        return holder.fields
    value = holder.environment
    try:
        image = value.image_spec(record["base_commit"]).image(value.image_prefix)
    except ImageError:
        image = ""  # no image can be named for this base commit; the harness cannot run it
    row = {
        "image": image,
        "eval_script": eval_script(
            environment=value.environment,
            test_patch=record["test_patch"],
            fail_to_pass=record["FAIL_TO_PASS"],
            pass_to_pass=record["PASS_TO_PASS"],
        ),
        "log_parser": LOG_PARSER,
        "eval_type": EVAL_TYPE,
    }
    holder.fields = row
    return row
