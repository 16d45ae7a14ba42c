"""Environment recipes in the admin: the report and attempts shown, the recipe editable (as the
API edits it: validated, marked the curator's, tried again)."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages

from curation.models import EnvironmentRecipe
from curation.services.recipes import RecipeConflict, recipe_prepare_enqueue, recipe_update
from workers.recipes.recipe import Recipe, RecipeError


class RecipeForm(forms.ModelForm):
    class Meta:
        model = EnvironmentRecipe
        fields = ["recipe"]

    def clean_recipe(self):
        data = self.cleaned_data["recipe"]
        try:
            Recipe.from_dict(data)
        except RecipeError as exc:
            raise forms.ValidationError(str(exc)) from None
        return data


@admin.register(EnvironmentRecipe)
class EnvironmentRecipeAdmin(admin.ModelAdmin):
    form = RecipeForm
    list_display = ["repository", "short_commit", "status", "source", "reason", "updated_at"]
    list_filter = ["status", "source"]
    search_fields = ["repository__name", "commit"]
    readonly_fields = [
        "repository",
        "commit",
        "source",
        "status",
        "reason",
        "hint",
        "report",
        "attempts",
        "environment_key",
        "revision",
        "updated_by",
    ]
    actions = ["prepare"]

    def has_add_permission(self, request) -> bool:
        return False  # a recipe belongs to an imported repository's snapshot

    @admin.display(description="commit")
    def short_commit(self, recipe) -> str:
        return recipe.commit[:10]

    def save_model(self, request, obj, form, change):
        try:
            recipe_update(
                row=obj, data=form.cleaned_data["recipe"], user=request.user, revision=obj.revision
            )
        except (RecipeConflict, RecipeError) as exc:
            self.message_user(request, str(exc), level=messages.ERROR)
            return
        recipe_prepare_enqueue(repository=obj.repository, user=request.user)
        self.message_user(request, "Saved as the curator's recipe; a try is queued.")

    @admin.action(description="Prepare the environment again (infer or try the recipe)")
    def prepare(self, request, queryset):
        for recipe in queryset.select_related("repository"):
            recipe_prepare_enqueue(repository=recipe.repository, user=request.user)
        self.message_user(request, f"Queued {queryset.count()} environment preparation(s).")
