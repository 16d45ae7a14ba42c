"""The API's JSON parser: orjson, and a limit on nesting.

DRF's parser uses the standard library, whose decoder recurses: JSON nested a thousand levels
deep ends in a RecursionError, that is a server error. orjson refuses input nested deeper than
1024 levels with an ordinary decode error, and this parser refuses anything nested deeper than
MAX_DEPTH: no body of this API needs more than a handful of levels, and a value nested a few
hundred levels deep would still overflow the stack of whatever formats it later (an error
message that quotes the value, for one). Every refusal is a 400.
"""

from __future__ import annotations

import codecs

import orjson
from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import ParseError

MAX_DEPTH = 64


def nesting_depth_exceeds(value, limit: int) -> bool:
    """Whether `value` nests lists or objects more than `limit` levels deep (no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        parser_context = parser_context or {}
        data = stream.read()
        encoding = parser_context.get("encoding", settings.DEFAULT_CHARSET)
        try:
            if codecs.lookup(encoding).name != "utf-8":
                data = data.decode(encoding)
            value = orjson.loads(data)
        except (orjson.JSONDecodeError, UnicodeDecodeError, LookupError) as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        if nesting_depth_exceeds(value, MAX_DEPTH):
            raise ParseError(f"JSON parse error - nested more than {MAX_DEPTH} levels deep")
        return value
