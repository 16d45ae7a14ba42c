"""Viewsets of the API's resources (registered on the router at import). Reviews register
from the review app (review/api.py), which owns them."""

from curation.api import (  # noqa: F401
    datasets,
    evaluations,
    grades,
    jobs,
    releases,
    repositories,
    tasks,
)
