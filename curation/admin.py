"""Django admin for the curation domain: what an admin managing datasets needs to find things."""

from django import forms
from django.contrib import admin, messages
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from curation.models import (
    ApiToken,
    Audit,
    Dataset,
    Evaluation,
    Finding,
    Release,
    ReleaseTask,
    Repository,
    SpecDependency,
    Specification,
    SpecResult,
    Task,
    TaskRevision,
    TestCase,
    Trajectory,
    TrajectoryStep,
)


class SynthesisForm(forms.Form):
    dataset = forms.ModelChoiceField(queryset=Dataset.objects.all())
    engine = forms.ChoiceField(choices=[("procedural", "procedural"), ("llm", "llm")])
    count = forms.IntegerField(min_value=1, max_value=500, initial=10)
    seed = forms.IntegerField(initial=0)


@admin.register(Repository)
class RepositoryAdmin(admin.ModelAdmin):
    """Repositories are imported on the curator's Repositories page (a job clones and checks
    them); a row typed in here would have no stored files, so there is no add form."""

    actions = ["synthesize_tasks"]
    list_display = (
        "name",
        "source_kind",
        "status",
        "default_commit_short",
        "test_files",
        "tests_collected",
        "tasks_verified",
        "short_reason",
        "created_at",
    )
    list_filter = ("status", "source_kind", "language")
    search_fields = ("name", "source", "default_commit", "status_reason")
    readonly_fields = (
        "source_kind",
        "source",
        "source_key",
        "requested_commit",
        "git_path",
        "default_commit",
        "status",
        "status_reason",
        "status_updated_at",
        "import_job",
        "test_files",
        "tests_collected",
        "tasks_verified",
        "layout",
        "created_at",
        "created_by",
    )

    def has_add_permission(self, request):
        return False

    @admin.display(description="commit")
    def default_commit_short(self, obj):
        return obj.default_commit[:12] or "-"

    @admin.display(description="reason")
    def short_reason(self, obj):
        return obj.status_reason[:80]

    @admin.action(description="Synthesize tasks from the selected repositories")
    def synthesize_tasks(self, request, queryset):
        from django.template.response import TemplateResponse

        from curation.services.synthesis import SynthesisInputError, synthesis_enqueue

        form = SynthesisForm(request.POST if "apply" in request.POST else None)
        if "apply" in request.POST and form.is_valid():
            for repository in queryset:
                try:
                    job = synthesis_enqueue(
                        repository=repository, user=request.user, **form.cleaned_data
                    )
                except SynthesisInputError as exc:
                    self.message_user(request, f"{repository.name}: {exc}", messages.ERROR)
                    continue
                self.message_user(
                    request, f"{repository.name}: synthesis job {job.pk} queued.", messages.SUCCESS
                )
            return None
        return TemplateResponse(
            request,
            "admin/curation/repository/synthesize.html",
            {
                **self.admin_site.each_context(request),
                "title": "Synthesize tasks",
                "form": form,
                "repositories": queryset,
                "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
                "opts": self.model._meta,
            },
        )


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "reviews_required",
        "consensus",
        "validation_reruns",
        "blind_review_share",
        "created_at",
    )
    list_filter = ("consensus",)
    search_fields = ("name", "description")
    filter_horizontal = ("members",)
    actions = ["cut_release"]
    readonly_fields = ("quality",)

    @admin.display(description="Quality of the verified tasks")
    def quality(self, dataset):
        if dataset.pk is None:
            return "-"
        from curation.selectors.quality import quality_report

        report = quality_report(tasks=dataset.tasks.all())
        rows = "".join(
            format_html("<tr><th>{}</th><td>{}</td></tr>", key.replace("_", " "), value)
            for key, value in report.items()
            if not isinstance(value, dict)
        )
        return format_html("<table>{}</table>", mark_safe(rows))  # noqa: S308 - escaped above

    @admin.action(description="Cut a release (next version) of the selected datasets")
    def cut_release(self, request, queryset):
        from curation.services.releases import ReleaseInputError, release_cut

        for dataset in queryset:
            try:
                release = release_cut(dataset=dataset, user=request.user)
            except ReleaseInputError as exc:
                self.message_user(request, f"{dataset.name}: {exc}", messages.ERROR)
                continue
            self.message_user(
                request, f"Cutting {release} (job {release.job_id}).", messages.SUCCESS
            )


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


class ReleaseTaskInline(admin.TabularInline):
    model = ReleaseTask
    extra = 0
    fields = ("instance_id", "revision", "content_sha256")
    readonly_fields = fields
    can_delete = False
    max_num = 0


class ReleaseCutAdminForm(forms.ModelForm):
    """Adding a release in the admin cuts it: a job builds it from the approved tasks."""

    trajectories = forms.BooleanField(
        required=False, help_text="Put trajectories and evaluations in the specloom file."
    )
    include_unsafe = forms.BooleanField(
        required=False, help_text="Keep trajectories the review agent flagged unsafe."
    )

    class Meta:
        model = Release
        fields = ["dataset", "version"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "version" in self.fields:
            self.fields["version"].required = False
            self.fields["version"].help_text = "Blank: the next vN."

    def clean(self):
        from curation.services.releases import ReleaseInputError, release_cut_check

        cleaned = super().clean()
        dataset = cleaned.get("dataset")
        if dataset is not None and self.instance.pk is None:
            try:
                cleaned["version"] = release_cut_check(
                    dataset=dataset,
                    version=cleaned.get("version"),
                    trajectories=cleaned.get("trajectories", False),
                    include_unsafe=cleaned.get("include_unsafe", False),
                )
            except ReleaseInputError as exc:
                raise forms.ValidationError(str(exc)) from None
        return cleaned

    def validate_unique(self):
        # The service checks the version (with the dataset locked) and reports it clearly.
        pass


@admin.register(Release)
class ReleaseAdmin(admin.ModelAdmin):
    form = ReleaseCutAdminForm
    list_display = ("dataset", "version", "status", "task_count", "cut_at", "created_by")
    list_filter = ("status", "dataset")
    search_fields = ("dataset__name", "version")
    inlines = [ReleaseTaskInline]

    @admin.display(description="tasks")
    def task_count(self, obj):
        count = getattr(obj, "entry_count", None)
        return count if count is not None else len(obj.manifest)

    def get_queryset(self, request):
        from django.db.models import Count

        queryset = super().get_queryset(request)
        if request.resolver_match and request.resolver_match.url_name.endswith("changelist"):
            # The list shows counts; loading every manifest (megabytes each) would not scale.
            queryset = queryset.defer("manifest", "datasheet").annotate(
                entry_count=Count("entries")
            )
        return queryset

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["dataset", "version", "trajectories", "include_unsafe"]
        return [f.name for f in Release._meta.fields if f.name != "id"]

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return ()
        # A release never changes once it exists: every field is read-only.
        return [f.name for f in Release._meta.fields]

    def get_inlines(self, request, obj):
        return [ReleaseTaskInline] if obj is not None else []

    def has_delete_permission(self, request, obj=None):
        # Only a release that failed to build (or whose job ended without finishing it): a
        # ready one never goes, and a building one's job may be finishing it (release_delete
        # refuses both).
        if obj is None or obj.status == Release.Status.FAILED:
            return True
        return obj.status == Release.Status.BUILDING and obj.job is not None and obj.job.is_finished

    def has_change_permission(self, request, obj=None):
        return obj is None or obj.status != Release.Status.READY

    def save_model(self, request, obj, form, change):
        from curation.models import ReleaseImmutable
        from curation.services.releases import release_cut

        if change:
            if obj.status == Release.Status.READY:
                raise ReleaseImmutable()
            return  # nothing of a building or failed release is editable
        release = release_cut(
            dataset=form.cleaned_data["dataset"],
            version=form.cleaned_data["version"],
            user=request.user,
            trajectories=form.cleaned_data["trajectories"],
            include_unsafe=form.cleaned_data["include_unsafe"],
        )
        # The admin goes on with `obj` (log entry, redirect): make it the release just cut.
        obj.pk = release.pk
        obj.version = release.version
        obj.status = release.status
        obj.job = release.job
        obj._state.adding = False
        self.message_user(request, f"Cutting {release} (job {release.job_id}).", messages.INFO)

    def save_related(self, request, form, formsets, change):
        pass  # entries are written by the cut, never by a form

    def delete_model(self, request, obj):
        from curation.services.releases import release_delete

        release_delete(release=obj)

    def delete_queryset(self, request, queryset):
        from curation.models import ReleaseImmutable
        from curation.services.releases import ReleaseInputError, release_delete

        for release in queryset:
            try:
                release_delete(release=release)
            except (ReleaseInputError, ReleaseImmutable) as exc:
                message = str(exc).removeprefix("release_immutable: ")
                self.message_user(request, f"{release} was kept: {message}", messages.WARNING)


class ApiTokenAdminForm(forms.ModelForm):
    scopes = forms.MultipleChoiceField(
        choices=ApiToken.Scope.choices, widget=forms.CheckboxSelectMultiple
    )

    class Meta:
        model = ApiToken
        fields = ["user", "name", "scopes"]

    def clean(self):
        # What the service would refuse becomes a form error rather than a crash on save.
        from curation import access
        from curation.services.tokens import TokenInputError, normalise_scopes

        cleaned = super().clean()
        if self.instance.pk is not None:
            return cleaned
        try:
            scopes = normalise_scopes(cleaned.get("scopes") or [])
        except TokenInputError as exc:
            raise forms.ValidationError(str(exc)) from None
        user = cleaned.get("user")
        if user is not None:
            if not access.is_reviewer(user):
                raise forms.ValidationError("Only users with a role can have tokens.")
            if "release" in scopes and not access.is_curator(user):
                raise forms.ValidationError("The release scope needs the curator role.")
        return cleaned


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens are created here or on the user's tokens page; the key is shown once."""

    form = ApiTokenAdminForm
    actions = ["revoke_tokens"]
    list_display = ("name", "user", "prefix", "scopes", "created_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at",)
    search_fields = ("name", "user__username", "prefix")
    list_select_related = ("user",)

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["user", "name", "scopes"]
        return ["user", "name", "prefix", "scopes", "created_at", "last_used_at", "revoked_at"]

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return ()
        # A token's key and rights are fixed: revoke it and create another to change them.
        return self.get_fields(request, obj)

    def save_model(self, request, obj, form, change):
        from curation.services.tokens import api_token_create

        if change:
            return
        token, key = api_token_create(
            user=form.cleaned_data["user"],
            name=form.cleaned_data["name"],
            scopes=form.cleaned_data["scopes"],
        )
        obj.pk = token.pk
        obj.prefix = token.prefix
        obj._state.adding = False
        self.message_user(
            request,
            f"Token {token.name!r} for {token.user}: {key}  (copy it now; it is not shown again)",
            messages.WARNING,
        )

    @admin.action(description="Revoke the selected tokens")
    def revoke_tokens(self, request, queryset):
        from curation.services.tokens import api_token_revoke

        revoked = sum(api_token_revoke(token=token) for token in queryset)
        self.message_user(request, f"Revoked {revoked} token(s).", messages.SUCCESS)


# Modules that register ModelAdmins of their own.
from curation import admin_grades, admin_recipes  # noqa: E402, F401
