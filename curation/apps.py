from django.apps import AppConfig
from django.db.models.signals import post_migrate


class CurationConfig(AppConfig):
    name = "curation"
    verbose_name = "Curation"

    def ready(self) -> None:
        # Job handlers of this app register their kinds with the job machinery.
        from curation import jobs  # noqa: F401
        from curation.roles import sync_role_permissions

        post_migrate.connect(sync_role_permissions, sender=self)
