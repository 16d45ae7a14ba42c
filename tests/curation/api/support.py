"""Assertions shared by the API tests."""


def error_of(response) -> dict:
    """The one error body; fails the test if the response does not have it."""
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "details"}, body
    return body["error"]
