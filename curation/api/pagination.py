from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import CursorPagination


class IdCursorPagination(CursorPagination):
    """Cursor pagination on the primary key: stable under inserts, O(1) at any depth.

    Stricter than DRF's: a page size that is not a whole number from 1 to the maximum, or a
    cursor that cannot be read, is bad input (400), not something quietly replaced.
    """

    ordering = "id"
    page_size_query_param = "page_size"
    max_page_size = 500

    def get_page_size(self, request):
        raw = request.query_params.get(self.page_size_query_param)
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
        # DRF answers a malformed cursor with 404, and a well-formed one holding a position that
        # is not an id with a server error; both are bad input, and say so.
        try:
            cursor = super().decode_cursor(request)
        except NotFound:
            raise ValidationError({"cursor": ["This cursor is not valid."]}) from None
        if cursor is not None and cursor.position is not None:
            try:
                int(cursor.position)
            except ValueError:
                raise ValidationError({"cursor": ["This cursor is not valid."]}) from None
        return cursor

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"].update(minimum=1, maximum=self.max_page_size)
        return parameters
