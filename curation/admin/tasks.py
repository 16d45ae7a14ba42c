"""Tasks and their specifications, tests and revisions in the admin."""

from django import forms
from django.contrib import admin, messages

from curation.models import SpecDependency, Specification, Task, TaskRevision, TestCase


class SpecificationInline(admin.TabularInline):
    model = Specification
    extra = 0
    fields = ("key", "kind", "statement", "order", "part", "verified", "verification_note")
    readonly_fields = ("verified", "verification_note")


class TestCaseInline(admin.TabularInline):
    model = TestCase
    extra = 0
    fields = ("nodeid", "intended_role", "role", "runs", "passes_base", "passes_reference")
    readonly_fields = ("role", "runs", "passes_base", "passes_reference")


class TaskAdminForm(forms.ModelForm):
    class Meta:
        model = Task
        fields = [
            "repository",
            "dataset",
            "base_commit",
            "title",
            "problem_statement",
            "status",
            "origin",
            "difficulty",
            "difficulty_score",
            "reference_patch",
            "test_patch",
            "trivial_included",
            "metadata",
        ]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "base_commit" in self.fields:
            self.fields["base_commit"].required = False
            self.fields["base_commit"].help_text = "Blank: the repository's default commit."

    def clean(self):
        from curation.runtime import base_reader
        from curation.services.tasks import TaskInputError, check_patches, statement_problem
        from workers import gitstore

        cleaned = super().clean()
        problem = statement_problem(cleaned.get("problem_statement") or "")
        if problem:
            self.add_error("problem_statement", problem[0].upper() + problem[1:] + ".")
        repository = cleaned.get("repository")
        if repository is not None and self.instance.pk is None:
            wanted = cleaned.get("base_commit") or repository.default_commit
            try:
                cleaned["base_commit"] = gitstore.resolve_commit(repository.git_dir, wanted)
            except gitstore.UnknownCommit:
                self.add_error("base_commit", f"{wanted!r} is not a commit of {repository.name}")
        commit = cleaned.get("base_commit") or self.instance.base_commit
        try:
            check_patches(
                reference_patch=cleaned.get("reference_patch", ""),
                test_patch=cleaned.get("test_patch", ""),
                read_base=base_reader(repository, commit) if repository and commit else None,
            )
        except TaskInputError as exc:
            raise forms.ValidationError(str(exc)) from None
        return cleaned


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    form = TaskAdminForm
    actions = ["validate_tasks", "include_trivial"]
    list_display = (
        "instance_id",
        "title",
        "dataset",
        "repository",
        "status",
        "origin",
        "difficulty",
        "revision",
        "interaction_score",
        "trivial",
        "updated_at",
    )
    list_filter = ("status", "origin", "difficulty", "trivial", "dataset", "repository")
    search_fields = ("instance_id", "title", "problem_statement")
    list_select_related = ("dataset", "repository")
    readonly_fields = (
        "instance_id",
        "number",
        "revision",
        "validated_revision",
        "validation",
        "interaction_score",
        "trivial",
        "review_slots_taken",
        "synthesis_job",
        "created_at",
        "updated_at",
    )
    inlines = [SpecificationInline, TestCaseInline]
    date_hierarchy = "created_at"

    @admin.action(description="Include the selected trivial tasks in releases anyway")
    def include_trivial(self, request, queryset):
        count = queryset.filter(trivial=True).update(trivial_included=True)
        self.message_user(request, f"{count} trivial task(s) will be released.", messages.SUCCESS)

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if obj is None:
            # A new task gets its number and instance id from the service, not the form.
            fields += ["status", "origin"]
        return fields

    def save_model(self, request, obj, form, change):
        from curation.services.tasks import task_allocate_identity

        if not change:
            obj.origin = Task.Origin.MANUAL
            obj.status = Task.Status.DRAFT
            obj.created_by = request.user
            task_allocate_identity(task=obj)
        super().save_model(request, obj, form, change)

    def response_add(self, request, obj, post_url_continue=None):
        from curation.services.validation import task_validation_enqueue

        if obj.tests.exists():
            job = task_validation_enqueue(task=obj, user=request.user)
            self.message_user(request, f"Validation queued (job {job.pk}).", messages.INFO)
        return super().response_add(request, obj, post_url_continue)

    @admin.action(description="Validate the selected tasks in the sandbox")
    def validate_tasks(self, request, queryset):
        from curation.services.validation import ValidationNotAllowed, task_validation_enqueue

        queued, refused = 0, []
        for task in queryset:
            try:
                task_validation_enqueue(task=task, user=request.user)
                queued += 1
            except ValidationNotAllowed as exc:
                refused.append(f"{task.instance_id}: {exc}")
        self.message_user(request, f"Queued validation of {queued} task(s).", messages.SUCCESS)
        for line in refused:
            self.message_user(request, line, messages.WARNING)


@admin.register(TaskRevision)
class TaskRevisionAdmin(admin.ModelAdmin):
    list_display = ("task", "revision", "author", "summary", "created_at")
    search_fields = ("task__instance_id", "summary")
    list_select_related = ("task", "author")


@admin.register(Specification)
class SpecificationAdmin(admin.ModelAdmin):
    list_display = ("task", "key", "kind", "short_statement")
    list_filter = ("kind",)
    search_fields = ("task__instance_id", "key", "statement")
    list_select_related = ("task",)

    @admin.display(description="statement")
    def short_statement(self, obj):
        return obj.statement[:100]


@admin.register(SpecDependency)
class SpecDependencyAdmin(admin.ModelAdmin):
    list_display = ("task", "from_spec", "to_spec", "relation", "evidence")
    list_filter = ("evidence", "relation")
    search_fields = ("task__instance_id",)
    list_select_related = ("task", "from_spec", "to_spec")
    raw_id_fields = ("task", "from_spec", "to_spec")


@admin.register(TestCase)
class TestCaseAdmin(admin.ModelAdmin):
    list_display = (
        "nodeid",
        "task",
        "intended_role",
        "role",
        "runs",
        "passes_base",
        "passes_reference",
    )
    list_filter = ("role", "intended_role")
    search_fields = ("nodeid", "task__instance_id")
    list_select_related = ("task",)
    raw_id_fields = ("task",)
    filter_horizontal = ("specs",)
