"""API tokens in the admin: created with a key shown once, revoked, never edited."""

from django import forms
from django.contrib import admin, messages

from curation.models import ApiToken


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
