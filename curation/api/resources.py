"""Viewsets of the API's resources (registered on the router at import)."""
