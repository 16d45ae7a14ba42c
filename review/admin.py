from django.contrib import admin

from review.models import Comment, Review, ReviewAssignment


@admin.register(ReviewAssignment)
class ReviewAssignmentAdmin(admin.ModelAdmin):
    list_display = ("task", "reviewer", "status", "claimed_at", "expires_at", "completed_at")
    list_filter = ("status",)
    search_fields = ("task__instance_id", "reviewer__username")
    list_select_related = ("task", "reviewer")
    raw_id_fields = ("task",)


@admin.register(Review)
class ReviewAdmin(admin.ModelAdmin):
    list_display = (
        "task",
        "reviewer",
        "decision",
        "task_revision",
        "spec_clarity",
        "test_validity",
        "interdependency",
        "difficulty",
        "is_adjudication",
        "created_at",
    )
    list_filter = ("decision", "difficulty", "is_adjudication", "task__dataset")
    search_fields = ("task__instance_id", "reviewer__username", "comment")
    list_select_related = ("task", "reviewer")
    raw_id_fields = ("task", "assignment")


@admin.register(Comment)
class CommentAdmin(admin.ModelAdmin):
    list_display = ("task", "author", "anchor", "file_path", "line", "created_at")
    list_filter = ("anchor",)
    search_fields = ("task__instance_id", "author__username", "body")
    list_select_related = ("task", "author")
    raw_id_fields = ("task", "spec", "test")
