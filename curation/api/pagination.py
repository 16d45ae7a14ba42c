from rest_framework.pagination import CursorPagination


class IdCursorPagination(CursorPagination):
    """Cursor pagination on the primary key: stable under inserts, O(1) at any depth."""

    ordering = "id"
    page_size_query_param = "page_size"
    max_page_size = 500
