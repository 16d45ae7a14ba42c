"""Synthesize, Datasets, Trajectories and Jobs pages."""

import json
from pathlib import Path

import pytest
from django.contrib.auth.models import Group

from curation.models import Dataset, Trajectory
from tests.curation.tasks_fixtures import hand_made_task, sample_repository
from tests.factories import RepositoryFactory, TaskFactory, UserFactory
from workers.models import Job
from workers.services import job_enqueue

pytestmark = pytest.mark.django_db

FORMATS = Path(__file__).resolve().parents[2] / "fixtures" / "formats"
HTMX = {"HTTP_HX_REQUEST": "true"}


class TestSynthesize:
    def test_only_imported_repositories_can_be_chosen(self, curator, repo_storage, dataset):
        sample_repository("ledger")
        RepositoryFactory(name="pending", status="queued", git_path="", default_commit="")
        page = curator.get("/synthesize/?repository=ledger").content.decode()
        assert '<option value="ledger" selected>' in page
        assert "pending" not in page

    def test_a_run_is_queued_and_its_page_follows_it(self, curator, repo_storage, dataset):
        sample_repository("ledger")
        response = curator.post(
            "/synthesize/",
            {"repository": "ledger", "dataset": "core", "engine": "procedural", "count": 3,
             "seed": 7},
        )  # fmt: skip
        job = Job.objects.get(kind="synthesize")
        assert response.status_code == 302
        assert response["Location"] == f"/jobs/{job.pk}/"
        assert job.params["count"] == 3 and job.params["seed"] == 7
        page = curator.get(response["Location"]).content.decode()
        assert "3 tasks with the procedural engine, seed 7" in page
        assert f"/jobs/{job.pk}/progress?refresh=1" in page
        assert 'href="/repositories/' in page and ">ledger</a>" in page
        assert ">core</a>" in page

    def test_the_outcome_is_shown_as_the_job_says_it(self, curator, repo_storage, dataset):
        repository = sample_repository("ledger")
        job = Job.objects.create(
            kind="synthesize",
            status="failed",
            progress=100,
            target_type_id=None,
            params={"repository_id": repository.pk, "dataset_id": dataset.pk, "count": 3,
                    "engine": "procedural", "seed": 0},
            message="failed: 2 of 3 asked; none verified: pytest addopts needs pytest-cov",
            error="none verified: pytest addopts needs pytest-cov",
            result={"report": {"tasks_produced": 2, "verified": 0, "rejected_total": 4,
                               "seconds_total": 12.0, "rejected_by_reason": {"timeout": 4}}},
        )  # fmt: skip
        response = curator.get(f"/jobs/{job.pk}/progress", **HTMX)
        assert response.status_code == 286
        page = curator.get(f"/jobs/{job.pk}/").content.decode()
        assert "failed: 2 of 3 asked; none verified: pytest addopts needs pytest-cov" in page
        assert "of 3 asked" in page and ">timeout<" in page

    @pytest.mark.parametrize(
        ("data", "message"),
        [
            ({"count": 0}, "greater than or equal to 1"),
            ({"repository": "nope"}, "Select a valid choice"),
            ({"engine": "magic"}, "Select a valid choice"),
            ({"engine": "llm"}, "the llm engine needs a base URL"),
        ],
    )
    def test_bad_input_gets_a_clear_error(
        self, curator, repo_storage, dataset, settings, data, message
    ):
        settings.LLM_BASE_URL = ""
        sample_repository("ledger")
        form = {"repository": "ledger", "dataset": "core", "engine": "procedural", "count": 1,
                "seed": 0, **data}  # fmt: skip
        response = curator.post("/synthesize/", form)
        assert response.status_code == 400
        assert message in response.content.decode()
        assert not Job.objects.filter(kind="synthesize").exists()


class TestDatasets:
    def test_a_dataset_is_created_with_its_policy(self, curator):
        response = curator.post(
            "/datasets/new",
            {"name": "hard-tasks", "description": "d", "reviews_required": 2,
             "consensus": "majority", "validation_reruns": 5},
        )  # fmt: skip
        dataset = Dataset.objects.get(name="hard-tasks")
        assert response["Location"] == f"/datasets/{dataset.pk}/"
        assert (dataset.reviews_required, dataset.consensus, dataset.validation_reruns) == (
            2,
            "majority",
            5,
        )
        assert b"hard-tasks" in curator.get("/datasets/").content

    @pytest.mark.parametrize(
        ("data", "message"),
        [
            ({"name": "core"}, "a dataset named &#x27;core&#x27; already exists"),
            ({"name": "Not A Slug"}, "Enter a valid “slug”"),
            ({"reviews_required": 0}, "greater than or equal to 1"),
            ({"consensus": "dictator"}, "Select a valid choice"),
        ],
    )
    def test_bad_input_gets_a_clear_error(self, curator, dataset, data, message):
        form = {"name": "new", "reviews_required": 1, "consensus": "unanimous",
                "validation_reruns": 3, **data}  # fmt: skip
        response = curator.post("/datasets/new", form)
        assert response.status_code == 400
        assert message in response.content.decode()

    def test_the_policy_changes(self, curator, dataset):
        url = f"/datasets/{dataset.pk}/policy"
        form = {"description": "x", "reviews_required": 3, "consensus": "majority",
                "validation_reruns": 2}  # fmt: skip
        assert curator.post(url, form).status_code == 302
        dataset.refresh_from_db()
        assert (dataset.reviews_required, dataset.consensus) == (3, "majority")
        response = curator.post(url, {**form, "reviews_required": 11})
        assert response.status_code == 400
        assert b"less than or equal to 10" in response.content

    def test_members_are_added_with_a_role_and_removed(self, curator, dataset, carol, alice):
        url = f"/datasets/{dataset.pk}/members"
        response = curator.post(url, {"username": "carol", "role": ""})
        assert response.status_code == 400
        assert b"carol has no role; give them the reviewer role" in response.content
        assert curator.post(url, {"username": "carol", "role": "reviewer"}).status_code == 302
        assert carol.groups.filter(name="reviewer").exists()
        assert dataset.members.filter(pk=carol.pk).exists()
        page = curator.get(f"/datasets/{dataset.pk}/").content.decode()
        assert "carol" in page and "reviewer" in page
        # Only an admin makes curators.
        response = curator.post(url, {"username": "carol", "role": "curator"})
        assert response.status_code == 400
        assert not carol.groups.filter(name="curator").exists()
        assert curator.post(url, {"username": "nobody"}).status_code == 400
        removed = curator.post(f"/datasets/{dataset.pk}/members/{alice.pk}/remove")
        assert removed.status_code == 302
        assert not dataset.members.filter(pk=alice.pk).exists()

    def test_an_admin_may_make_a_curator(self, client, dataset, carol):
        admin = UserFactory(username="root", roles=["admin"])
        client.force_login(admin)
        url = f"/datasets/{dataset.pk}/members"
        assert client.post(url, {"username": "carol", "role": "curator"}).status_code == 302
        assert Group.objects.get(name="curator").user_set.filter(pk=carol.pk).exists()


class TestTrajectories:
    @pytest.fixture
    def task(self, repo_storage, dataset):
        return hand_made_task("ledger_allocation", dataset=dataset)

    def _upload(self, client, path: Path, **data):
        with path.open("rb") as handle:
            return client.post("/trajectories/", {"file": handle, "format": "auto", **data})

    def test_a_file_is_imported_with_its_format_detected(self, curator, task, tmp_path):
        predictions = tmp_path / "preds.jsonl"
        patch = (Path(__file__).resolve().parents[2] / "fixtures" / "tasks" / "ledger_allocation"
                 / "reference.patch").read_text()  # fmt: skip
        predictions.write_text(
            json.dumps(
                {"instance_id": task.instance_id, "model_name_or_path": "m1", "model_patch": patch}
            )
            + "\n"
            + json.dumps(
                {"instance_id": "specloom__nope-1", "model_name_or_path": "m1", "model_patch": ""}
            )
            + "\n"
        )
        response = self._upload(curator, predictions, dataset="core", evaluate="on")
        page = response.content.decode()
        assert response.status_code == 200
        assert "format: <strong>predictions</strong>" in page
        assert "1 imported" in page and "1 refused" in page
        assert "no task with instance id" in page
        trajectory = Trajectory.objects.get()
        assert trajectory.model_name == "m1"
        assert Job.objects.filter(kind="evaluate_trajectory").count() == 1

    def test_errors_carry_their_line_numbers(self, curator, task):
        response = self._upload(
            curator,
            FORMATS / "variants" / "predictions" / "mixed-good-and-bad.jsonl",
            task=task.instance_id,
        )
        page = response.content.decode()
        assert '<td class="mono nowrap">2</td>' in page  # a truncated JSON line
        assert '<td class="mono nowrap">8</td>' in page  # "this is not json"
        assert Trajectory.objects.filter(task=task).exists()

    def test_an_unknown_format_is_refused_with_the_reason(self, curator, task):
        response = self._upload(curator, FORMATS / "variants" / "unknown" / "package-lock.json")
        assert response.status_code == 400
        assert "specloom (Specloom" in response.content.decode()
        assert not Trajectory.objects.exists()

    def test_bad_input_gets_a_clear_error(self, curator, task):
        path = FORMATS / "real" / "swe-bench" / "predictions-example.json"
        response = self._upload(curator, path, task=task.instance_id, dataset="core")
        assert response.status_code == 400
        assert b"Choose a dataset or a task, not both." in response.content
        response = self._upload(curator, path, task="specloom__nope-9")
        assert response.status_code == 400
        assert b"No task" in response.content
        response = curator.post("/trajectories/", {"format": "auto"})
        assert response.status_code == 400
        assert b"This field is required" in response.content


class TestJobs:
    def test_every_job_names_its_subject(self, curator, dataset):
        repository = RepositoryFactory(name="lib")
        task = TaskFactory(dataset=dataset, repository=repository)
        job_enqueue(kind="echo", target=repository, params={})
        job_enqueue(
            kind="synthesize",
            target=repository,
            params={"dataset_id": dataset.pk, "count": 2, "seed": 0, "engine": "procedural"},
        )
        job_enqueue(kind="validate_task", target=task, params={})
        job_enqueue(kind="echo", target=dataset, params={})
        page = curator.get("/jobs/").content.decode()
        assert f'href="/repositories/{repository.pk}/">lib</a>' in page
        assert f'href="/datasets/{dataset.pk}/">core</a>' in page
        assert task.instance_id in page
        assert "synthesis" in page and "validation" in page
        assert b"every 2s" in curator.get("/jobs/").content  # something is queued: it polls

    def test_filters_and_the_polling_fragment(self, curator):
        Job.objects.create(kind="echo", status="failed", message="failed: boom")
        Job.objects.create(kind="sleep", status="succeeded", message="slept")
        page = curator.get("/jobs/?status=failed").content.decode()
        assert "failed: boom" in page and "slept" not in page
        assert curator.get("/jobs/?part=table", **HTMX).status_code == 286
        assert curator.get("/jobs/?status=bogus&page=x").status_code == 200

    def test_a_failed_job_is_retried_and_a_queued_one_cancelled(self, curator):
        failed = Job.objects.create(kind="echo", status="failed", params={"a": 1})
        response = curator.post(f"/jobs/{failed.pk}/retry")
        retry = Job.objects.exclude(pk=failed.pk).get()
        assert response["Location"] == f"/jobs/{retry.pk}/"
        assert retry.params == {"a": 1, "retry_of": failed.pk}
        assert retry.status == "queued"
        response = curator.post(f"/jobs/{retry.pk}/cancel", {"next": "list"})
        assert response["Location"] == "/jobs/"
        retry.refresh_from_db()
        assert retry.status == "cancelled"

    def test_finished_jobs_cannot_be_cancelled_nor_running_ones_retried(self, curator):
        done = Job.objects.create(kind="echo", status="succeeded")
        response = curator.post(f"/jobs/{done.pk}/cancel")
        assert b"has already finished" in curator.get(response["Location"]).content
        running = Job.objects.create(kind="echo", status="running")
        response = curator.post(f"/jobs/{running.pk}/retry")
        assert b"only failed or cancelled jobs retry" in curator.get(response["Location"]).content
        assert Job.objects.count() == 2

    def test_tracebacks_are_for_admins(self, curator, client):
        job = Job.objects.create(
            kind="echo", status="failed", message="failed: KeyError", error="Traceback ...\n"
        )
        page = curator.get(f"/jobs/{job.pk}/").content.decode()
        assert "Traceback" not in page and "in the worker's log" in page
        client.force_login(UserFactory(username="root", roles=["admin"]))
        assert "Traceback" in client.get(f"/jobs/{job.pk}/").content.decode()
