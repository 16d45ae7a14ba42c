"""Grades in the admin: read-only (a grade is a measurement; asking again is how it changes)."""

from __future__ import annotations

from django.contrib import admin

from curation.models import Grade, GradeSpecResult, GradeSubmission


class GradeSubmissionInline(admin.TabularInline):
    model = GradeSubmission
    fields = ["model_name", "user", "token", "created_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False


class GradeSpecResultInline(admin.TabularInline):
    model = GradeSpecResult
    fields = ["spec", "satisfied"]
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(Grade)
class GradeAdmin(admin.ModelAdmin):
    list_display = ["id", "task", "task_revision", "status", "resolved", "patch_applied"]
    list_filter = ["status", "resolved"]
    search_fields = ["task__instance_id", "patch_sha256"]
    list_select_related = ["task"]
    inlines = [GradeSubmissionInline, GradeSpecResultInline]
    readonly_fields = [field.name for field in Grade._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
