from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Review"

    def ready(self) -> None:
        # Edits live in curation (they also serve the API); review reopens slots when one lands.
        from curation.services.editing import task_content_changed
        from review.services import on_task_content_changed

        task_content_changed.connect(on_task_content_changed, dispatch_uid="review-reopen-slots")
        # The demo's seeded reviews are a job kind of this app.
        from review import demo  # noqa: F401
