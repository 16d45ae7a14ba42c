from django.contrib import admin, messages

from workers.models import Job
from workers.services import job_cancel


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "kind",
        "queue",
        "status",
        "progress",
        "attempts",
        "message",
        "target_type",
        "target_id",
        "created_at",
        "finished_at",
    )
    list_filter = ("status", "kind", "queue")
    search_fields = ("id", "kind", "message", "target_id", "error", "worker")
    date_hierarchy = "created_at"
    readonly_fields = [f.name for f in Job._meta.fields]
    actions = ["cancel_jobs"]

    def has_add_permission(self, request):
        # Jobs are started by the features that need them, never typed in by hand.
        return False

    @admin.action(description="Cancel the selected jobs")
    def cancel_jobs(self, request, queryset):
        cancelled = sum(job_cancel(job=job) for job in queryset)
        self.message_user(request, f"Cancelled {cancelled} job(s).", messages.SUCCESS)
