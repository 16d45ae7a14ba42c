from django.apps import AppConfig


class WorkersConfig(AppConfig):
    name = "workers"
    verbose_name = "Jobs"

    def ready(self) -> None:
        # The harmless job kinds that exercise the machinery register themselves here.
        from workers import builtin_jobs  # noqa: F401
