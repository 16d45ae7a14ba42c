from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from specloom import health

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include("curation.api.urls")),
    path("", include("curation.urls")),
    path("", include("review.urls")),
]

# Under /api/ a missing route or a crash answers in the API's one error body.
handler400 = "curation.api.errors.bad_request"
handler403 = "curation.api.errors.permission_denied"
handler404 = "curation.api.errors.page_not_found"
handler500 = "curation.api.errors.server_error"
