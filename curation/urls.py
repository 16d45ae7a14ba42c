from django.urls import path

from curation import views
from curation.pages import datasets, jobs, repositories, synthesis, trajectories

urlpatterns = [
    path("tokens/", views.tokens, name="api-tokens"),
    path("tokens/new", views.token_create, name="api-token-create"),
    path("tokens/<int:token_id>/revoke", views.token_revoke, name="api-token-revoke"),
    path("releases/", views.releases, name="releases"),
    path("releases/cut", views.release_cut_view, name="release-cut"),
    path("releases/<int:release_id>/", views.release_detail, name="release-detail"),
    path("calibration/", views.calibration, name="calibration"),
    # The curator's pipeline.
    path("repositories/", repositories.repositories, name="repositories"),
    path("repositories/import", repositories.repository_import_view, name="repository-import"),
    path(
        "repositories/<int:repository_id>/",
        repositories.repository_detail,
        name="repository-detail",
    ),
    path(
        "repositories/<int:repository_id>/import-progress",
        repositories.repository_import_progress,
        name="repository-import-progress",
    ),
    path(
        "repositories/<int:repository_id>/retry",
        repositories.repository_retry,
        name="repository-retry",
    ),
    path(
        "repositories/<int:repository_id>/recipe",
        repositories.repository_recipe,
        name="repository-recipe",
    ),
    path(
        "repositories/<int:repository_id>/recipe/prepare",
        repositories.repository_recipe_prepare,
        name="repository-recipe-prepare",
    ),
    path("synthesize/", synthesis.synthesize, name="synthesize"),
    path("datasets/", datasets.datasets, name="datasets"),
    path("datasets/new", datasets.dataset_create_view, name="dataset-create"),
    path("datasets/<int:dataset_id>/", datasets.dataset_detail, name="dataset-detail"),
    path("datasets/<int:dataset_id>/policy", datasets.dataset_policy, name="dataset-policy"),
    path(
        "datasets/<int:dataset_id>/members", datasets.dataset_member_add, name="dataset-member-add"
    ),
    path(
        "datasets/<int:dataset_id>/members/<int:user_id>/remove",
        datasets.dataset_member_remove,
        name="dataset-member-remove",
    ),
    path("trajectories/", trajectories.trajectories, name="trajectories"),
    path("jobs/", jobs.jobs, name="jobs"),
    path("jobs/<int:job_id>/", jobs.job_detail, name="job-detail"),
    path("jobs/<int:job_id>/progress", jobs.job_progress, name="job-progress"),
    path("jobs/<int:job_id>/retry", jobs.job_retry_view, name="job-retry"),
    path("jobs/<int:job_id>/cancel", jobs.job_cancel_view, name="job-cancel"),
]
