"""Parsing untrusted source from many threads at once never fails for the wrong reason."""

import threading

import pytest

from workers import pysource

NESTED = "x = " + "(" * 50 + "1" + ")" * 50 + "\n" + "def f(a):\n    return [a for _ in range(3)]\n"


def test_parses_in_many_threads_at_once():
    errors: list[BaseException] = []

    def parse_many() -> None:
        try:
            for _ in range(200):
                pysource.parse(NESTED * 20)
        except BaseException as exc:  # reported in the test's own thread
            errors.append(exc)

    threads = [threading.Thread(target=parse_many) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_a_text_nested_too_deeply_is_a_syntax_error():
    with pytest.raises(SyntaxError):
        pysource.parse("x = " + "[" * 100_000 + "]" * 100_000)
    assert pysource.parse("x = 1").body  # and parsing goes on working
