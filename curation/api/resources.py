"""Viewsets of the API's resources (registered on the router at import)."""

from curation.api import (  # noqa: F401
    datasets,
    evaluations,
    grades,
    jobs,
    releases,
    repositories,
    reviews,
    tasks,
)
