from django.urls import path

from review.views import dashboard, decisions, editing, leases, queue, task, trajectories

# Everything but the dashboard lives under review/, apart from the curation pages.

urlpatterns = [
    path("", dashboard.dashboard, name="dashboard"),
    path("review/jobs/running", dashboard.running_jobs, name="review-running-jobs"),
    path("review/queue/", queue.queue, name="review-queue"),
    path("review/queue/claim-next", queue.claim_next, name="review-claim-next"),
    path("review/adjudication/", decisions.adjudication_queue, name="review-adjudication"),
    path("review/agreement/", dashboard.agreement_page, name="review-agreement"),
    path("review/tasks/<int:task_id>/", task.task_detail, name="review-task"),
    path(
        "review/tasks/<int:task_id>/panel/<slug:panel>", task.task_panel, name="review-task-panel"
    ),
    path("review/tasks/<int:task_id>/history", task.task_history, name="review-task-history"),
    path("review/tasks/<int:task_id>/jobs", task.task_jobs, name="review-task-jobs"),
    path(
        "review/tasks/<int:task_id>/saved/<int:revision>",
        task.task_saved,
        name="review-task-saved",
    ),
    path("review/tasks/<int:task_id>/claim", leases.task_claim, name="review-task-claim"),
    path("review/tasks/<int:task_id>/release", leases.task_release, name="review-task-release"),
    path(
        "review/tasks/<int:task_id>/heartbeat", leases.task_heartbeat, name="review-task-heartbeat"
    ),
    path("review/tasks/<int:task_id>/decide", decisions.task_decide, name="review-task-decide"),
    path(
        "review/tasks/<int:task_id>/adjudicate",
        decisions.task_adjudicate,
        name="review-task-adjudicate",
    ),
    path("review/tasks/<int:task_id>/comments", task.task_comment, name="review-task-comment"),
    path("review/tasks/<int:task_id>/edit/<slug:part>", editing.task_edit, name="review-task-edit"),
    path(
        "review/tasks/<int:task_id>/edit/<slug:part>/<str:ident>",
        editing.task_edit,
        name="review-task-edit-item",
    ),
    path(
        "review/trajectories/<int:trajectory_id>/",
        trajectories.trajectory_detail,
        name="review-trajectory",
    ),
]
