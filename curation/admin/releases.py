"""Releases in the admin: cut from a form that checks first, never edited once ready."""

from django import forms
from django.contrib import admin, messages

from curation.models import Release, ReleaseImmutable, ReleaseTask


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
        from curation.services.releases import ReleaseInputError, release_delete

        for release in queryset:
            try:
                release_delete(release=release)
            except (ReleaseInputError, ReleaseImmutable) as exc:
                message = str(exc).removeprefix("release_immutable: ")
                self.message_user(request, f"{release} was kept: {message}", messages.WARNING)
