from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import CursorPagination

from curation.api.params import query_param


class IdCursorPagination(CursorPagination):
    """Cursor pagination on the primary key: stable under inserts, O(1) at any depth.

    Stricter than DRF's: a page size that is not a whole number from 1 to the maximum, or
    either parameter given twice, is bad input (400), not something quietly replaced. A cursor
    is an opaque token the API handed out; one that cannot be read names no page: 404, as DRF
    answers (and a well-formed one holding a position that is not an id, which DRF would let
    through to a server error, likewise).
    """

    ordering = "id"
    page_size_query_param = "page_size"
    max_page_size = 500

    def get_page_size(self, request):
        raw = query_param(request, self.page_size_query_param)
        if raw is None:
            return self.page_size
        try:
            size = int(raw)
        except ValueError:
            size = 0
        if not 1 <= size <= self.max_page_size:
            raise ValidationError(
                {
                    self.page_size_query_param: [
                        f"Give a whole number from 1 to {self.max_page_size}."
                    ]
                }
            )
        return size

    def decode_cursor(self, request):
        query_param(request, self.cursor_query_param)  # 400 when given twice
        try:
            cursor = super().decode_cursor(request)
        except NotFound:
            raise NotFound("This cursor names no page of this list.") from None
        if cursor is not None and cursor.position is not None:
            try:
                int(cursor.position)
            except ValueError:
                raise NotFound("This cursor names no page of this list.") from None
        return cursor

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"].update(minimum=1, maximum=self.max_page_size)
            if parameter["name"] == self.cursor_query_param:
                parameter["description"] = (
                    "The `next` or `previous` link's cursor; one the API did not hand out is a 404."
                )
        return parameters
