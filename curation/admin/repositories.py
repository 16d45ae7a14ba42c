"""Repositories and datasets in the admin: import, synthesis and release actions."""

from django import forms
from django.contrib import admin, messages
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from curation.models import Dataset, Repository


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
