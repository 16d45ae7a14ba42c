"""The REST API under /api/v1/, its OpenAPI schema and Swagger UI."""

from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

# Resource modules register their viewsets on the router when imported; list them here.
from curation.api import resources, trajectories  # noqa: F401
from curation.api.errors import api_not_found
from curation.api.grades import TaskGradeView
from curation.api.recipes import RepositoryRecipePrepareView, RepositoryRecipeView
from curation.api.router import router

urlpatterns = [
    path("api/v1/repositories/<int:pk>/recipe", RepositoryRecipeView.as_view(), name="recipe"),
    path(
        "api/v1/repositories/<int:pk>/recipe/prepare",
        RepositoryRecipePrepareView.as_view(),
        name="recipe-prepare",
    ),
    path("api/v1/tasks/<int:pk>/grade", TaskGradeView.as_view(), name="task-grade"),
    path("api/v1/", include(router.urls)),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    # Last under /api/: anything else answers the API's error body, never an HTML page.
    re_path(r"^api/", api_not_found),
]
