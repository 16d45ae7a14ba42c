"""Django admin for the curation domain: what an admin managing datasets needs to find things.

One module per concern; importing each registers its ModelAdmins (admin autodiscovery imports
this package).
"""

from curation.admin import (  # noqa: F401
    grades,
    recipes,
    releases,
    repositories,
    tasks,
    tokens,
    trajectories,
)
