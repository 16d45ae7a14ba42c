"""The chat client: retries with backoff, Retry-After, timeouts, broken answers, accounting.

Real HTTP to the scripted server with the real `openai` client; backoff is kept tiny through
the configuration, or recorded by an injected `sleep` where the delays themselves matter.
"""

from __future__ import annotations

import random
import time

import pytest

from tests.support.llm_server import (  # noqa: F401 (llm_server_fixture registers the fixture)
    Reply,
    ScriptedLLMServer,
    Usage,
    llm_server_fixture,
)
from workers.llm_client import (
    HTTP_ERROR,
    MALFORMED,
    OK,
    TIMEOUT,
    ChatClient,
    LLMConfig,
)

MESSAGES = [{"role": "user", "content": "propose something"}]


def config_for(server: ScriptedLLMServer, **overrides) -> LLMConfig:
    values = {
        "base_url": server.base_url,
        "model": "coder-7b",
        "api_key": "test-key",
        "timeout_seconds": 5.0,
        "max_retries": 3,
        "backoff_base_seconds": 0.01,
        "backoff_max_seconds": 0.05,
        "retry_after_cap_seconds": 0.1,
    }
    return LLMConfig(**(values | overrides))


class RecordingSleep:
    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def test_it_returns_the_content_and_the_usage(llm_server):
    llm_server.enqueue(Reply.json({"title": "x"}, usage=Usage(300, 120)))
    config = config_for(llm_server, price_per_1k_prompt=0.5, price_per_1k_completion=2.0)
    reply = ChatClient(config).complete(MESSAGES, seed=11)
    assert reply.status == OK
    assert '"title"' in reply.content
    assert (reply.prompt_tokens, reply.completion_tokens) == (300, 120)
    assert reply.cost == pytest.approx(300 * 0.5 / 1000 + 120 * 2.0 / 1000)
    assert (reply.requests, reply.retries) == (1, 0)
    body = llm_server.chat_requests[0].body
    assert body["model"] == "coder-7b"
    assert body["response_format"] == {"type": "json_object"}
    assert body["seed"] == 11
    assert body["temperature"] == pytest.approx(0.2)


def test_it_leaves_out_what_the_configuration_switches_off(llm_server):
    llm_server.enqueue(Reply.text("{}"))
    config = config_for(llm_server, json_mode=False, send_seed=False, temperature=None)
    ChatClient(config).complete(MESSAGES, seed=11)
    body = llm_server.chat_requests[0].body
    assert not {"response_format", "seed", "temperature"} & set(body)


def test_it_retries_server_errors_with_growing_backoff(llm_server):
    llm_server.enqueue(Reply.error(500), Reply.error(500), Reply.json({"ok": True}))
    started = time.monotonic()
    reply = ChatClient(config_for(llm_server)).complete(MESSAGES)
    assert reply.status == OK
    assert (reply.requests, reply.retries) == (3, 2)
    assert len(reply.attempts) == 2 and "HTTP 500" in reply.attempts[0]
    # The default backoff (1 s base) would sleep at least 1.5 s; the configured one is tiny.
    assert time.monotonic() - started < 1.5
    assert len(llm_server.chat_requests) == 3


def test_backoff_doubles_with_jitter_and_is_capped(llm_server):
    llm_server.enqueue(*[Reply.error(502)] * 4, Reply.text("{}"))
    sleep = RecordingSleep()
    config = config_for(
        llm_server, max_retries=4, backoff_base_seconds=1.0, backoff_max_seconds=3.0
    )
    reply = ChatClient(config, sleep=sleep, rng=random.Random(1)).complete(MESSAGES)
    assert reply.status == OK and reply.retries == 4
    nominal = [1.0, 2.0, 3.0, 3.0]  # doubling, capped at backoff_max_seconds
    for delay, full in zip(sleep.delays, nominal, strict=True):
        assert full / 2 <= delay <= full


def test_it_honours_retry_after_up_to_the_cap(llm_server):
    llm_server.enqueue(
        Reply.error(429, retry_after=0.25),
        Reply.error(503, retry_after=3600),
        Reply.text("{}"),
    )
    sleep = RecordingSleep()
    config = config_for(llm_server, retry_after_cap_seconds=2.0)
    reply = ChatClient(config, sleep=sleep).complete(MESSAGES)
    assert reply.status == OK
    assert sleep.delays == [0.25, 2.0]


def test_it_reads_retry_after_as_an_http_date(llm_server):
    llm_server.enqueue(
        Reply.error(503, retry_after="Wed, 21 Oct 2015 07:28:00 GMT"), Reply.text("{}")
    )
    sleep = RecordingSleep()
    ChatClient(config_for(llm_server), sleep=sleep).complete(MESSAGES)
    assert sleep.delays == [0.0]  # a date in the past: go again at once


def test_it_gives_up_after_max_retries(llm_server):
    llm_server.enqueue(*[Reply.error(503)] * 3)
    reply = ChatClient(config_for(llm_server, max_retries=2)).complete(MESSAGES)
    assert reply.status == HTTP_ERROR
    assert reply.http_status == 503
    assert (reply.requests, reply.retries) == (3, 2)
    assert "after 3 attempts" in reply.error
    assert not reply.fatal


@pytest.mark.parametrize("status", [400, 422])
def test_it_does_not_retry_client_errors(llm_server, status):
    llm_server.enqueue(Reply.error(status, "context too long"), Reply.text("{}"))
    reply = ChatClient(config_for(llm_server)).complete(MESSAGES)
    assert reply.status == HTTP_ERROR
    assert reply.http_status == status
    assert "context too long" in reply.error
    assert reply.requests == 1 and not reply.fatal
    assert llm_server.remaining == 1


@pytest.mark.parametrize("status", [401, 403, 404])
def test_configuration_errors_are_fatal(llm_server, status):
    llm_server.enqueue(Reply.error(status))
    reply = ChatClient(config_for(llm_server)).complete(MESSAGES)
    assert reply.status == HTTP_ERROR and reply.fatal
    assert reply.requests == 1


def test_dropped_connections_are_retried(llm_server):
    llm_server.enqueue(Reply.dropped(), Reply.text("{}"))
    reply = ChatClient(config_for(llm_server)).complete(MESSAGES)
    assert reply.status == OK and reply.retries == 1
    assert "connection error" in reply.attempts[0]


def test_a_reply_slower_than_the_timeout_is_a_timeout(llm_server):
    llm_server.enqueue(Reply.text("{}").slow(3), Reply.text("{}").slow(3))
    config = config_for(llm_server, timeout_seconds=0.3, max_retries=1)
    started = time.monotonic()
    reply = ChatClient(config).complete(MESSAGES)
    assert reply.status == TIMEOUT
    assert reply.requests == 2  # a timeout is transient: it was tried once more
    assert time.monotonic() - started < 2


def test_a_body_that_is_not_json_is_malformed_not_a_crash(llm_server):
    llm_server.enqueue(Reply.raw("<html>Bad gateway</html>"))
    reply = ChatClient(config_for(llm_server)).complete(MESSAGES)
    assert reply.status == MALFORMED
    assert "not JSON" in reply.error


def test_an_empty_answer_is_malformed(llm_server):
    llm_server.enqueue(Reply.text(""))
    reply = ChatClient(config_for(llm_server)).complete(MESSAGES)
    assert reply.status == MALFORMED
    assert reply.error == "the answer is empty"
    assert reply.prompt_tokens > 0  # the server still billed the call


def test_an_unreachable_endpoint_is_an_http_error():
    with ScriptedLLMServer() as server:
        base_url = server.base_url  # the port is free again once the server stops
    config = LLMConfig(base_url=base_url, model="m", max_retries=1, backoff_base_seconds=0.01)
    reply = ChatClient(config).complete(MESSAGES)
    assert reply.status == HTTP_ERROR
    assert reply.requests == 2


def test_usage_adds_up_over_calls(llm_server):
    llm_server.enqueue(
        Reply.text("{}", usage=Usage(100, 10)),
        Reply.error(500),
        Reply.text("{}", usage=Usage(200, 20)),
    )
    config = config_for(llm_server, price_per_1k_prompt=1.0, price_per_1k_completion=3.0)
    client = ChatClient(config)
    client.complete(MESSAGES)
    client.complete(MESSAGES)
    totals = client.usage
    assert (totals.prompt_tokens, totals.completion_tokens, totals.total_tokens) == (300, 30, 330)
    assert totals.cost == pytest.approx(0.3 + 0.09)
    assert (totals.requests, totals.retries) == (3, 1)
    assert llm_server.usage_sent() == Usage(300, 30)


def test_config_comes_from_settings_then_run_overrides():
    config = LLMConfig.from_settings(
        {"base_url": "http://llm:8000/v1", "model": "default", "api_key": "k", "max_retries": 2},
        {"model": "coder-32b", "timeout_seconds": 30, "max_retries": None},
    )
    assert (config.model, config.timeout_seconds, config.max_retries) == ("coder-32b", 30, 2)
    assert config.public_dict()["api_key"] == "set"
    assert "k" not in config.public_dict().values()


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"base_url": "http://x/v1", "model": "m", "modle": "typo"}, "unknown LLM setting"),
        ({"base_url": "", "model": "m"}, "base_url is empty"),
        ({"base_url": "http://x/v1", "model": "m", "timeout_seconds": 0}, "timeout_seconds"),
    ],
)
def test_bad_settings_fail_loudly(values, message):
    with pytest.raises(ValueError, match=message):
        LLMConfig.from_settings(values)


def test_a_client_that_cannot_be_made_is_a_fatal_error():
    def broken_factory(config):
        raise ValueError("unsupported scheme 'htp'")

    config = LLMConfig(base_url="htp://nowhere/v1", model="m")
    reply = ChatClient(config, client_factory=broken_factory).complete(MESSAGES)
    assert reply.status == HTTP_ERROR and reply.fatal
    assert reply.requests == 0
    assert "unsupported scheme" in reply.error
