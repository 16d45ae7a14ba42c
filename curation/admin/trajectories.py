"""Trajectories, evaluations and the review agent's audits and findings in the admin."""

from django.contrib import admin

from curation.models import Audit, Evaluation, Finding, SpecResult, Trajectory, TrajectoryStep


class TrajectoryStepInline(admin.TabularInline):
    model = TrajectoryStep
    extra = 0
    fields = ("index", "role", "kind", "tool")
    readonly_fields = fields
    show_change_link = True
    max_num = 0

    def get_queryset(self, request):
        # A trajectory can hold thousands of steps; the change page shows the first ones only.
        return super().get_queryset(request).order_by("index")


@admin.register(Trajectory)
class TrajectoryAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "task",
        "model_name",
        "scaffold",
        "source_format",
        "exit_status",
        "step_count",
        "cost_usd",
        "unsafe",
        "created_at",
    )
    list_filter = ("source_format", "unsafe", "model_name", "scaffold")
    search_fields = ("model_name", "task__instance_id", "content_sha256")
    list_select_related = ("task",)
    raw_id_fields = ("task",)
    readonly_fields = ("content_sha256", "step_count", "created_at", "imported_by")


@admin.register(TrajectoryStep)
class TrajectoryStepAdmin(admin.ModelAdmin):
    list_display = ("trajectory", "index", "role", "kind", "tool")
    list_filter = ("role", "kind")
    search_fields = ("trajectory__model_name",)
    raw_id_fields = ("trajectory",)


@admin.register(Evaluation)
class EvaluationAdmin(admin.ModelAdmin):
    list_display = ("trajectory", "resolved", "patch_applied", "task_revision", "created_at")
    list_filter = ("resolved", "patch_applied")
    search_fields = ("trajectory__model_name", "trajectory__task__instance_id")
    raw_id_fields = ("trajectory", "job")


@admin.register(SpecResult)
class SpecResultAdmin(admin.ModelAdmin):
    list_display = ("evaluation", "spec", "satisfied")
    list_filter = ("satisfied",)
    raw_id_fields = ("evaluation", "spec")


@admin.register(Finding)
class FindingAdmin(admin.ModelAdmin):
    list_display = (
        "task",
        "kind",
        "severity",
        "source",
        "task_revision",
        "trajectory",
        "dismissed",
        "superseded",
        "created_at",
    )
    list_filter = ("kind", "severity", "source", "dismissed", "superseded")
    search_fields = ("task__instance_id", "message")
    list_select_related = ("task", "trajectory")
    raw_id_fields = ("task", "trajectory", "job", "audit")


@admin.register(Audit)
class AuditAdmin(admin.ModelAdmin):
    """Audits are history: what the review agent said about one revision, and when."""

    list_display = ("task", "task_revision", "trajectory_count", "llm_status", "created_at")
    list_filter = ("llm_status",)
    search_fields = ("task__instance_id",)
    list_select_related = ("task",)
    raw_id_fields = ("task", "job")
    readonly_fields = [f.name for f in Audit._meta.fields]

    def has_add_permission(self, request):
        return False
