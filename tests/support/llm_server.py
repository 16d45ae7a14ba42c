"""A scripted OpenAI-compatible chat server on loopback, for testing code that calls a model.

The server speaks real HTTP, so the code under test uses the real `openai` client, its
timeouts and its error mapping. It answers `POST /v1/chat/completions` from a script: a queue
of `Reply` values consumed one per request, in order. A reply can be a normal assistant message
(any text: a JSON document, malformed JSON, prose), a raw HTTP body that is not a chat
completion at all, an HTTP error status (with Retry-After), a delayed answer, or a dropped
connection. Every request body is recorded, so a test can assert what the client sent.

    with ScriptedLLMServer([Reply.json({"ok": True}), Reply.error(500)]) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="k")
        ...
        assert server.chat_requests[0].body["model"] == "m"

Nothing here is specific to one caller: the synthesis agent and the LLM auditor both script
their answers with it. `GET /v1/models` lists one model.
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

DEFAULT_MODEL = "scripted-model"
# A rough English-text ratio; the point is realistic, deterministic numbers, not exact ones.
_CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }


@dataclass(frozen=True)
class Reply:
    """One scripted answer. Build them with the class methods rather than by hand."""

    # The assistant message's content; None for replies that are not chat completions.
    content: str | None = None
    # A raw HTTP body sent as is (with `status`), instead of a chat completion.
    body: str | None = None
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    # Seconds to wait before answering (or before dropping the connection).
    delay: float = 0.0
    # Close the connection without sending any response.
    drop: bool = False
    # Usage to report; None estimates it from the sizes of the request and of the content.
    usage: Usage | None = None
    finish_reason: str = "stop"

    @classmethod
    def json(cls, value: Any, *, usage: Usage | None = None) -> Reply:
        """An assistant message whose content is `value` as JSON (a str is sent unchanged)."""
        content = value if isinstance(value, str) else json.dumps(value, indent=1)
        return cls(content=content, usage=usage)

    @classmethod
    def text(
        cls, content: str, *, usage: Usage | None = None, finish_reason: str = "stop"
    ) -> Reply:
        """An assistant message with arbitrary content, e.g. malformed JSON or prose."""
        return cls(content=content, usage=usage, finish_reason=finish_reason)

    @classmethod
    def raw(cls, body: str, *, status: int = 200, content_type: str = "application/json") -> Reply:
        """An HTTP response whose body is not a chat completion (a broken proxy, a bad server)."""
        return cls(body=body, status=status, headers=(("Content-Type", content_type),))

    @classmethod
    def error(
        cls,
        status: int,
        message: str = "",
        *,
        retry_after: float | str | None = None,
        error_type: str = "",
    ) -> Reply:
        """An OpenAI-style error answer; `retry_after` sets the Retry-After header."""
        payload = {
            "error": {
                "message": message or f"scripted error {status}",
                "type": error_type or ("server_error" if status >= 500 else "invalid_request"),
                "code": None,
                "param": None,
            }
        }
        headers = [("Content-Type", "application/json")]
        if retry_after is not None:
            headers.append(("Retry-After", str(retry_after)))
        return cls(body=json.dumps(payload), status=status, headers=tuple(headers))

    @classmethod
    def dropped(cls, *, delay: float = 0.0) -> Reply:
        """Close the connection without answering."""
        return cls(drop=True, delay=delay)

    def slow(self, seconds: float) -> Reply:
        """This reply, sent only after `seconds`."""
        return replace(self, delay=seconds)


# A script entry is a reply, or a function that makes one from the request it answers.
ScriptEntry = Reply | Callable[["RecordedRequest"], Reply]


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    raw: str
    body: Any  # parsed JSON, or None when the body was not JSON
    received_at: float

    @property
    def messages(self) -> list[dict[str, Any]]:
        if isinstance(self.body, dict):
            return list(self.body.get("messages") or [])
        return []

    @property
    def last_user_message(self) -> str:
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return _text_of(message.get("content"))
        return ""

    @property
    def text(self) -> str:
        """All message contents joined, for "did the client tell the model X" assertions."""
        return "\n".join(_text_of(m.get("content")) for m in self.messages)


@dataclass
class Served:
    """What the server did with one chat request."""

    request_index: int
    status: int  # 0 when the connection was dropped
    usage: Usage | None
    delivered: bool  # False when the client had gone before the answer was written
    seconds: float


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}]
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def estimate_usage(request_body: Any, content: str) -> Usage:
    messages = request_body.get("messages", []) if isinstance(request_body, dict) else []
    prompt_chars = sum(len(_text_of(m.get("content"))) + 4 for m in messages)
    return Usage(
        prompt_tokens=max(1, prompt_chars // _CHARS_PER_TOKEN),
        completion_tokens=max(1, len(content) // _CHARS_PER_TOKEN),
    )


class ScriptedLLMServer:
    """An OpenAI-compatible server on 127.0.0.1 (a free port) that answers from a script.

    When the script runs out, requests get `when_exhausted` (by default a 400 error, which a
    client does not retry, so a test that under-scripts fails quickly and visibly).
    If `api_key` is set, requests without `Authorization: Bearer <api_key>` get 401.
    """

    def __init__(
        self,
        script: Iterable[ScriptEntry] = (),
        *,
        model: str = DEFAULT_MODEL,
        api_key: str | None = None,
        when_exhausted: Reply | None = None,
    ) -> None:
        self.model = model
        self.api_key = api_key
        self.when_exhausted = when_exhausted or Reply.error(
            400, "scripted server: the script is exhausted"
        )
        self.requests: list[RecordedRequest] = []
        self.served: list[Served] = []
        self._script: deque[ScriptEntry] = deque(script)
        self._lock = threading.Lock()
        # Requests still being answered: a client can read the whole response before the
        # handler has noted what it served, so readers of `served` wait for them first.
        self._in_flight = 0
        self._idle = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> ScriptedLLMServer:
        if self._httpd is not None:
            return self
        handler = type("_BoundHandler", (_Handler,), {"server_state": self})
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        # Handler threads may sit in a scripted delay; they must not hold up shutdown.
        httpd.daemon_threads = True
        httpd.block_on_close = False
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="scripted-llm-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- script and records ------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the server is not running")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """What an OpenAI client takes as base_url."""
        return f"http://127.0.0.1:{self.port}/v1"

    def enqueue(self, *entries: ScriptEntry) -> None:
        with self._lock:
            self._script.extend(entries)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._script)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def settled(self) -> list[Served]:
        """What was served, once every request in flight has been answered and noted."""
        with self._idle:
            self._idle.wait_for(lambda: self._in_flight == 0, timeout=10)
            return list(self.served)

    def usage_sent(self) -> Usage:
        """Sum of the usage of every chat completion the client actually received."""
        delivered = [s.usage for s in self.settled() if s.usage is not None and s.delivered]
        return Usage(
            prompt_tokens=sum(u.prompt_tokens for u in delivered),
            completion_tokens=sum(u.completion_tokens for u in delivered),
        )

    # -- used by the handler -----------------------------------------------------------------

    def _record(self, request: RecordedRequest) -> int:
        with self._lock:
            self.requests.append(request)
            return len(self.requests) - 1

    def _started(self) -> None:
        with self._lock:
            self._in_flight += 1

    def _finished(self) -> None:
        with self._idle:
            self._in_flight -= 1
            self._idle.notify_all()

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            entry = self._script.popleft() if self._script else self.when_exhausted
        return entry(request) if callable(entry) else entry

    def _note_served(self, served: Served) -> None:
        with self._lock:
            self.served.append(served)

    def _wait(self, seconds: float) -> bool:
        """Sleep, but wake at shutdown; True if the server is stopping."""
        return self._stopping.wait(seconds) if seconds > 0 else self._stopping.is_set()


class _Handler(BaseHTTPRequestHandler):
    server_state: ScriptedLLMServer  # set on the subclass that `start` makes
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers do: the client pools connections

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the test output is no place for an access log

    def do_GET(self) -> None:
        self._read_request()
        if self.path.rstrip("/").endswith("/models"):
            state = self.server_state
            payload = {
                "object": "list",
                "data": [{"id": state.model, "object": "model", "created": 0, "owned_by": "tests"}],
            }
            self._send(200, json.dumps(payload))
        else:
            self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))

    def do_POST(self) -> None:
        self.server_state._started()
        try:
            self._answer_post()
        finally:
            self.server_state._finished()

    def _answer_post(self) -> None:
        state = self.server_state
        request = self._read_request()
        index = state._record(request)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))
            return
        if state.api_key is not None and request.headers.get("authorization") != (
            f"Bearer {state.api_key}"
        ):
            reply = Reply.error(401, "invalid api key", error_type="invalid_api_key")
        elif isinstance(request.body, dict) and request.body.get("stream"):
            reply = Reply.error(400, "scripted server: streaming is not supported")
        else:
            reply = state._next_reply(request)
        started = time.monotonic()
        if state._wait(reply.delay):
            self.close_connection = True
            return
        if reply.delay and self._peer_gone():
            # The client gave up while we waited (its timeout): nothing reaches it any more.
            self.close_connection = True
            state._note_served(Served(index, reply.status, None, False, time.monotonic() - started))
            return
        if reply.drop:
            self._drop()
            state._note_served(Served(index, 0, None, False, time.monotonic() - started))
            return
        usage = None
        if reply.body is not None:
            body, status = reply.body, reply.status
        else:
            content = reply.content or ""
            usage = reply.usage or estimate_usage(request.body, content)
            body, status = self._completion(request, index, content, reply, usage), reply.status
        delivered = self._send(status, body, reply.headers)
        state._note_served(Served(index, status, usage, delivered, time.monotonic() - started))

    # -- helpers -----------------------------------------------------------------------------

    def _read_request(self) -> RecordedRequest:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode("utf-8", errors="replace") if length else ""
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = None
        return RecordedRequest(
            method=self.command,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            raw=raw,
            body=body,
            received_at=time.time(),
        )

    def _completion(
        self, request: RecordedRequest, index: int, content: str, reply: Reply, usage: Usage
    ) -> str:
        model = self.server_state.model
        if isinstance(request.body, dict) and request.body.get("model"):
            model = str(request.body["model"])
        return json.dumps(
            {
                "id": f"chatcmpl-scripted-{index}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "system_fingerprint": "scripted",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": reply.finish_reason,
                        "logprobs": None,
                    }
                ],
                "usage": usage.as_dict(),
            }
        )

    def _send(self, status: int, body: str, headers: Iterable[tuple[str, str]] = ()) -> bool:
        """Write a response; False if the client had already gone (it timed out)."""
        data = body.encode()
        extra = list(headers)
        try:
            self.send_response(status)
            if not any(name.lower() == "content-type" for name, _ in extra):
                self.send_header("Content-Type", "application/json")
            for name, value in extra:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            self.close_connection = True
            return False
        return True

    def _peer_gone(self) -> bool:
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            if not readable:
                return False
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _drop(self) -> None:
        # SO_LINGER with a zero timeout makes close() send a reset instead of a clean FIN, the
        # way a crashed upstream or a load balancer cutting the connection looks to a client.
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


@pytest.fixture(name="llm_server")
def llm_server_fixture():
    """A running scripted server with an empty script; tests `enqueue` their replies."""
    with ScriptedLLMServer() as server:
        yield server
