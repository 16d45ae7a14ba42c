"""The one router of /api/v1/. Resource modules register on it; urls.py imports them first."""

from rest_framework.routers import DefaultRouter

router = DefaultRouter(trailing_slash=False)
