from django.urls import path

from curation import views

urlpatterns = [
    path("tokens/", views.tokens, name="api-tokens"),
    path("tokens/new", views.token_create, name="api-token-create"),
    path("tokens/<int:token_id>/revoke", views.token_revoke, name="api-token-revoke"),
    path("releases/", views.releases, name="releases"),
    path("releases/cut", views.release_cut_view, name="release-cut"),
    path("releases/<int:release_id>/", views.release_detail, name="release-detail"),
    path("calibration/", views.calibration, name="calibration"),
]
