"""The llm engine through a synthesis run: a scripted OpenAI-compatible server on loopback."""

import pytest

from curation.models import Task
from curation.services.synthesis import SynthesisInputError, synthesis_enqueue
from tests.curation.tasks_fixtures import sample_repository
from tests.support.llm_proposals import MODULE, good_proposal
from tests.support.llm_server import Reply, llm_server_fixture  # noqa: F401
from workers import gitstore
from workers.models import Job
from workers.services import job_execute

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def test_an_llm_run_stores_a_verified_task_with_its_usage(
    repo_storage, sandbox_root, dataset, llm_server, settings
):
    settings.LLM_API_KEY = "sk-test-key-from-the-environment"
    repository = sample_repository("marktext")
    source = gitstore.read_file(repository.git_dir, repository.default_commit, MODULE)
    llm_server.enqueue(
        Reply.error(503, "busy"), Reply.text("{ not json"), Reply.json(good_proposal(source))
    )

    job = synthesis_enqueue(
        repository=repository,
        dataset=dataset,
        engine="llm",
        count=1,
        llm={
            "base_url": llm_server.base_url,
            "model": "scripted-model",
            "rounds": 3,
            "api_key": "must-not-be-stored",
        },
    )
    assert "api_key" not in job.params["llm"]
    assert job_execute(job_id=job.pk) == "succeeded", Job.objects.get(pk=job.pk).error
    job.refresh_from_db()

    task = Task.objects.get(synthesis_job=job)
    assert task.origin == "llm"
    assert task.base_commit == repository.default_commit
    assert task.validation["verified"] is True
    assert task.status == "needs_review"
    report = job.result["report"]
    assert report["tasks_produced"] == 1
    # The model's specs went through the same linkage as every task: what its tests verify.
    specs = {s.key: s for s in task.specs.all()}
    assert all(s.verified == s.tests.filter(role="FAIL_TO_PASS").exists() for s in specs.values())
    assert specs["S1"].verified and not specs["S1"].tests.exclude(role="FAIL_TO_PASS").exists()
    assert report["quality"]["tasks_without_interaction_test"] == 0
    # The key came from the settings and went out in the Authorization header only.
    assert all(
        {k.lower(): v for k, v in r.headers.items()}.get("authorization")
        == "Bearer sk-test-key-from-the-environment"
        for r in llm_server.chat_requests
    )
    assert "must-not-be-stored" not in str(job.result)


def test_an_llm_run_needs_an_endpoint(repo_storage, dataset, settings):
    settings.LLM_BASE_URL = ""
    with pytest.raises(SynthesisInputError, match="needs a base URL"):
        synthesis_enqueue(
            repository=sample_repository("marktext"), dataset=dataset, engine="llm", count=1
        )
