from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Review"

    def ready(self) -> None:
        # Edits live in curation (they also serve the API); review reopens slots when one lands.
        from curation.services.editing import task_content_changed
        from review.services import on_task_content_changed

        task_content_changed.connect(on_task_content_changed, dispatch_uid="review-reopen-slots")
        # Curation reads reviews through the port it owns; this app is its implementation.
        from curation.review_port import register
        from review.port import ReviewAppPort

        register(ReviewAppPort())
        # The reviews API is this app's resource on curation's router (curation.api never
        # imports review), registered before the URL configuration builds the router's urls;
        # the demo's seeded reviews are a job kind of this app.
        from review import api, demo  # noqa: F401
