"""The scripted OpenAI-compatible server, driven by the real `openai` client over HTTP."""

from __future__ import annotations

import json
import time

import openai
import pytest

from tests.support.llm_server import (  # noqa: F401 (llm_server_fixture registers the fixture)
    Reply,
    ScriptedLLMServer,
    Usage,
    llm_server_fixture,
)


def client_for(server: ScriptedLLMServer, **options) -> openai.OpenAI:
    options.setdefault("timeout", 5)
    return openai.OpenAI(base_url=server.base_url, api_key="test-key", max_retries=0, **options)


def ask(client: openai.OpenAI, content: str = "hello", **extra):
    return client.chat.completions.create(
        model="coder-7b", messages=[{"role": "user", "content": content}], **extra
    )


def test_it_answers_with_a_scripted_message_and_realistic_usage(llm_server):
    llm_server.enqueue(Reply.json({"answer": 42}))
    response = ask(client_for(llm_server), "what is the answer?")
    assert json.loads(response.choices[0].message.content) == {"answer": 42}
    assert response.choices[0].finish_reason == "stop"
    assert response.model == "coder-7b"  # echoes the model asked for, as servers do
    assert response.id == "chatcmpl-scripted-0"
    usage = response.usage
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert llm_server.usage_sent() == Usage(usage.prompt_tokens, usage.completion_tokens)


def test_it_records_what_the_client_sent(llm_server):
    llm_server.enqueue(Reply.text("ok"))
    ask(client_for(llm_server), "first question", response_format={"type": "json_object"}, seed=3)
    [request] = llm_server.chat_requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer test-key"
    assert request.body["model"] == "coder-7b"
    assert request.body["response_format"] == {"type": "json_object"}
    assert request.body["seed"] == 3
    assert request.last_user_message == "first question"


def test_it_reports_the_usage_it_was_given(llm_server):
    llm_server.enqueue(Reply.json({"a": 1}, usage=Usage(1000, 250)))
    usage = ask(client_for(llm_server)).usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (1000, 250, 1250)


def test_it_answers_in_script_order_and_then_refuses(llm_server):
    llm_server.enqueue(Reply.text("one"), Reply.text("two"))
    client = client_for(llm_server)
    assert ask(client).choices[0].message.content == "one"
    assert ask(client).choices[0].message.content == "two"
    assert llm_server.remaining == 0
    with pytest.raises(openai.BadRequestError, match="script is exhausted"):
        ask(client)


def test_it_builds_replies_from_the_request(llm_server):
    llm_server.enqueue(lambda request: Reply.text(request.last_user_message.upper()))
    assert ask(client_for(llm_server), "shout").choices[0].message.content == "SHOUT"


def test_it_sends_http_errors_with_retry_after(llm_server):
    llm_server.enqueue(Reply.error(429, "slow down", retry_after=7), Reply.error(503))
    client = client_for(llm_server)
    with pytest.raises(openai.RateLimitError) as rate_limited:
        ask(client)
    assert rate_limited.value.response.headers["retry-after"] == "7"
    assert "slow down" in str(rate_limited.value)
    with pytest.raises(openai.InternalServerError) as unavailable:
        ask(client)
    assert unavailable.value.status_code == 503


def test_it_sends_malformed_text_as_the_message_or_as_the_body(llm_server):
    llm_server.enqueue(Reply.text('{"title": "unfinished'), Reply.raw("<html>502</html>"))
    client = client_for(llm_server)
    assert ask(client).choices[0].message.content == '{"title": "unfinished'
    with pytest.raises(ValueError):  # the client cannot decode a body that is not JSON
        ask(client)


def test_it_drops_connections(llm_server):
    llm_server.enqueue(Reply.dropped(), Reply.text("after the drop"))
    client = client_for(llm_server)
    with pytest.raises(openai.APIConnectionError):
        ask(client)
    assert ask(client).choices[0].message.content == "after the drop"
    assert llm_server.settled()[0].status == 0


def test_a_slow_reply_makes_the_client_time_out(llm_server):
    llm_server.enqueue(Reply.text("too late").slow(2), Reply.text("in time"))
    client = client_for(llm_server, timeout=0.3)
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        ask(client)
    assert time.monotonic() - started < 1.8  # well before the answer (2 s)
    # The slow answer is still pending on its own thread; the next request is not held up.
    assert ask(client).choices[0].message.content == "in time"


def test_usage_of_answers_the_client_never_received_is_not_counted():
    with ScriptedLLMServer([Reply.text("late", usage=Usage(10, 10)).slow(0.6)]) as server:
        with pytest.raises(openai.APITimeoutError):
            ask(client_for(server, timeout=0.2))
        deadline = time.monotonic() + 3
        while not server.served and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.served[0].delivered is False
        assert server.usage_sent() == Usage(0, 0)


def test_it_lists_its_model(llm_server):
    models = client_for(llm_server).models.list()
    assert [m.id for m in models.data] == ["scripted-model"]


def test_it_can_require_an_api_key():
    with ScriptedLLMServer([Reply.text("secret")], api_key="right-key") as server:
        with pytest.raises(openai.AuthenticationError):
            ask(client_for(server))
        assert server.remaining == 1  # a refused request does not use up the script


def test_it_stops_quickly_even_with_a_reply_pending():
    server = ScriptedLLMServer([Reply.text("never").slow(30)]).start()
    client = client_for(server, timeout=0.2)
    with pytest.raises(openai.APITimeoutError):
        ask(client)
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < 2
