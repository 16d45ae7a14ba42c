from django.urls import path

from review import views

# Everything but the dashboard lives under review/, apart from the curation pages.

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("review/jobs/running", views.running_jobs, name="review-running-jobs"),
    path("review/queue/", views.queue, name="review-queue"),
    path("review/queue/claim-next", views.claim_next, name="review-claim-next"),
    path("review/adjudication/", views.adjudication_queue, name="review-adjudication"),
    path("review/agreement/", views.agreement_page, name="review-agreement"),
    path("review/tasks/<int:task_id>/", views.task_detail, name="review-task"),
    path(
        "review/tasks/<int:task_id>/panel/<slug:panel>", views.task_panel, name="review-task-panel"
    ),
    path("review/tasks/<int:task_id>/history", views.task_history, name="review-task-history"),
    path("review/tasks/<int:task_id>/jobs", views.task_jobs, name="review-task-jobs"),
    path(
        "review/tasks/<int:task_id>/saved/<int:revision>",
        views.task_saved,
        name="review-task-saved",
    ),
    path("review/tasks/<int:task_id>/claim", views.task_claim, name="review-task-claim"),
    path("review/tasks/<int:task_id>/release", views.task_release, name="review-task-release"),
    path(
        "review/tasks/<int:task_id>/heartbeat", views.task_heartbeat, name="review-task-heartbeat"
    ),
    path("review/tasks/<int:task_id>/decide", views.task_decide, name="review-task-decide"),
    path(
        "review/tasks/<int:task_id>/adjudicate",
        views.task_adjudicate,
        name="review-task-adjudicate",
    ),
    path("review/tasks/<int:task_id>/comments", views.task_comment, name="review-task-comment"),
    path("review/tasks/<int:task_id>/edit/<slug:part>", views.task_edit, name="review-task-edit"),
    path(
        "review/tasks/<int:task_id>/edit/<slug:part>/<str:ident>",
        views.task_edit,
        name="review-task-edit-item",
    ),
    path(
        "review/trajectories/<int:trajectory_id>/",
        views.trajectory_detail,
        name="review-trajectory",
    ),
]
