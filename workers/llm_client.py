"""Chat completions from any OpenAI-compatible endpoint, with bounded retries and accounting.

Plain Python (no Django). vLLM, Ollama, llama.cpp's server and hosted APIs all speak the same
`/v1/chat/completions`; the `openai` client talks to them. Its own retries are switched off
(`max_retries=0`) so that every attempt is counted here and the backoff follows our rules:
transient failures (429, 5xx gateways, dropped connections, timeouts) are retried with
exponential backoff and jitter, honouring Retry-After up to a cap; anything else fails the call
at once. A call never raises for HTTP trouble or a broken answer: it returns a `ChatReply`
whose status says what went wrong.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from typing import Any

import openai

# Statuses worth another attempt: the server was busy, restarting, or behind a gateway that was.
TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
# Statuses that mean the configuration is wrong (key, permissions, model or path): no later
# round can succeed, so the caller should stop asking.
FATAL_STATUSES = frozenset({401, 403, 404})

# ChatReply.status values
OK = "ok"
HTTP_ERROR = "http-error"
TIMEOUT = "timeout"
MALFORMED = "malformed"

# Local servers ignore the key, but the client refuses to start without one.
_PLACEHOLDER_KEY = "not-needed"


@dataclass(frozen=True)
class LLMConfig:
    base_url: str
    model: str
    api_key: str = ""
    timeout_seconds: float = 120.0
    max_retries: int = 3
    price_per_1k_prompt: float = 0.0
    price_per_1k_completion: float = 0.0
    # Backoff before retry n (1-based) is backoff_base_seconds * 2**(n-1), capped, with jitter.
    backoff_base_seconds: float = 1.0
    backoff_max_seconds: float = 30.0
    retry_after_cap_seconds: float = 60.0
    temperature: float | None = 0.2
    max_tokens: int | None = None
    # response_format={"type": "json_object"}; a server that rejects it can be told not to.
    json_mode: bool = True
    # Send a per-task seed (OpenAI, vLLM and Ollama accept it) so reruns ask the same way.
    send_seed: bool = True

    def __post_init__(self) -> None:
        problems = []
        if not self.base_url.strip():
            problems.append("base_url is empty")
        if not self.model.strip():
            problems.append("model is empty")
        if self.timeout_seconds <= 0:
            problems.append("timeout_seconds must be positive")
        if self.max_retries < 0:
            problems.append("max_retries must not be negative")
        if min(self.price_per_1k_prompt, self.price_per_1k_completion) < 0:
            problems.append("prices must not be negative")
        if problems:
            raise ValueError("invalid LLM configuration: " + "; ".join(problems))

    @classmethod
    def from_settings(
        cls, defaults: Mapping[str, Any], overrides: Mapping[str, Any] | None = None
    ) -> LLMConfig:
        """Settings first, then a synthesis run's own choices; None means "keep the default".

        Unknown keys raise, so that a misspelt setting fails loudly instead of being ignored.
        """
        known = {f.name for f in fields(cls)}
        values: dict[str, Any] = {}
        for layer in (defaults, overrides or {}):
            unknown = sorted(set(layer) - known)
            if unknown:
                raise ValueError(f"unknown LLM setting(s): {', '.join(unknown)}")
            values.update({k: v for k, v in layer.items() if v is not None})
        return cls(**values)

    def public_dict(self) -> dict[str, Any]:
        """The configuration as stored on a run: everything but the key itself."""
        values = asdict(self)
        values["api_key"] = "set" if self.api_key else ""
        return values

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (
            prompt_tokens * self.price_per_1k_prompt
            + completion_tokens * self.price_per_1k_completion
        ) / 1000


@dataclass
class Usage:
    """Running totals over calls: tokens as reported by the server, cost, HTTP attempts."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    requests: int = 0  # HTTP attempts, retries included
    retries: int = 0
    calls_without_usage: int = 0  # answers whose server reported no usage

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, reply: ChatReply) -> None:
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens
        self.cost += reply.cost
        self.requests += reply.requests
        self.retries += reply.retries
        self.calls_without_usage += int(reply.status == OK and not reply.usage_reported)

    def as_dict(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "cost": round(self.cost, 6),
            "requests": self.requests,
            "retries": self.retries,
            "calls_without_usage": self.calls_without_usage,
        }


@dataclass
class ChatReply:
    status: str  # OK, HTTP_ERROR, TIMEOUT or MALFORMED
    content: str = ""
    finish_reason: str = ""
    error: str = ""
    http_status: int | None = None
    # The endpoint refused the configuration (bad key, unknown model): stop asking it.
    fatal: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usage_reported: bool = False
    cost: float = 0.0
    requests: int = 0
    retries: int = 0
    seconds: float = 0.0
    response_id: str = ""
    model: str = ""
    # One line per failed attempt, for the run's log.
    attempts: list[str] = field(default_factory=list)


ClientFactory = Callable[[LLMConfig], Any]


def make_openai_client(config: LLMConfig) -> Any:
    return openai.OpenAI(
        base_url=config.base_url,
        api_key=config.api_key or _PLACEHOLDER_KEY,
        timeout=config.timeout_seconds,
        max_retries=0,  # retries are ours, so that each attempt is counted and bounded
    )


class ChatClient:
    """One endpoint and model; `complete` sends a conversation and returns a `ChatReply`.

    `usage` accumulates over every call. `sleep` and `rng` are injectable so that tests can
    run backoff without waiting and with known jitter.
    """

    def __init__(
        self,
        config: LLMConfig,
        *,
        client_factory: ClientFactory | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.config = config
        self.usage = Usage()
        self._client_factory = client_factory or make_openai_client
        self._client: Any = None
        self._sleep = sleep
        self._rng = rng or random.Random()  # noqa: S311 (jitter, not security)

    def close(self) -> None:
        close = getattr(self._client, "close", None)
        if callable(close):
            close()
        self._client = None

    def complete(self, messages: list[dict[str, str]], *, seed: int | None = None) -> ChatReply:
        started = time.monotonic()
        reply = self._complete(messages, seed)
        reply.seconds = round(time.monotonic() - started, 3)
        reply.cost = self.config.cost(reply.prompt_tokens, reply.completion_tokens)
        self.usage.add(reply)
        return reply

    def _complete(self, messages: list[dict[str, str]], seed: int | None) -> ChatReply:
        config = self.config
        request: dict[str, Any] = {"model": config.model, "messages": messages}
        if config.json_mode:
            request["response_format"] = {"type": "json_object"}
        if config.temperature is not None:
            request["temperature"] = config.temperature
        if config.max_tokens is not None:
            request["max_tokens"] = config.max_tokens
        if config.send_seed and seed is not None:
            request["seed"] = seed

        attempts: list[str] = []
        if self._client is None:
            try:
                self._client = self._client_factory(config)
            except Exception as exc:  # a bad base URL or option: no request can be sent
                error = f"the client could not be created: {type(exc).__name__}: {exc}"
                return ChatReply(status=HTTP_ERROR, error=error, fatal=True)
        for attempt in range(config.max_retries + 1):
            retry_after: float | None = None
            try:
                response = self._client.chat.completions.create(**request)
            except openai.APITimeoutError:
                status, error, transient, code = TIMEOUT, "the request timed out", True, None
            except openai.APIConnectionError as exc:
                cause = exc.__cause__ or exc
                error = f"connection error: {cause}"
                status, transient, code = HTTP_ERROR, True, None
            except openai.APIStatusError as exc:
                code = exc.status_code
                status, error = HTTP_ERROR, f"HTTP {code}: {_error_message(exc)}"
                transient = code in TRANSIENT_STATUSES
                retry_after = _retry_after_seconds(exc)
                if code in FATAL_STATUSES:
                    attempts.append(f"attempt {attempt + 1}: {error}")
                    return _failed(HTTP_ERROR, error, attempts, attempt, code, fatal=True)
            except openai.OpenAIError as exc:
                return _failed(MALFORMED, f"unusable response: {exc}", attempts, attempt, None)
            except ValueError as exc:
                # The client could not decode the body: not JSON, so not a chat completion.
                return _failed(
                    MALFORMED, f"the response body is not JSON: {exc}", attempts, attempt, None
                )
            else:
                return _read_completion(response, attempts, attempt)

            attempts.append(f"attempt {attempt + 1}: {error}")
            if not transient:
                return _failed(status, error, attempts, attempt, code)
            if attempt == config.max_retries:
                more = f" (after {attempt + 1} attempts)" if attempt else ""
                return _failed(status, error + more, attempts, attempt, code)
            self._sleep(self._backoff(attempt + 1, retry_after))
        raise AssertionError("unreachable: the loop returns on its last attempt")

    def _backoff(self, retry: int, retry_after: float | None) -> float:
        config = self.config
        if retry_after is not None:
            # The server said when; believe it, but never wait longer than the cap.
            return max(0.0, min(retry_after, config.retry_after_cap_seconds))
        delay = min(config.backoff_max_seconds, config.backoff_base_seconds * 2 ** (retry - 1))
        # "Equal jitter": at least half the delay, so retries from many workers spread out
        # without collapsing to zero.
        return delay * (0.5 + 0.5 * self._rng.random())


def _failed(
    status: str,
    error: str,
    attempts: list[str],
    attempt: int,
    http_status: int | None,
    *,
    fatal: bool = False,
) -> ChatReply:
    return ChatReply(
        status=status,
        error=error,
        http_status=http_status,
        fatal=fatal,
        requests=attempt + 1,
        retries=attempt,
        attempts=attempts,
    )


def _read_completion(response: Any, attempts: list[str], attempt: int) -> ChatReply:
    reply = ChatReply(status=OK, requests=attempt + 1, retries=attempt, attempts=attempts)
    reply.response_id = str(getattr(response, "id", "") or "")
    reply.model = str(getattr(response, "model", "") or "")
    usage = getattr(response, "usage", None)
    if usage is not None:
        reply.prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        reply.completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        reply.usage_reported = True
    choices = getattr(response, "choices", None) or []
    if not choices:
        reply.status, reply.error = MALFORMED, "the response has no choices"
        return reply
    choice = choices[0]
    message = getattr(choice, "message", None)
    reply.finish_reason = str(getattr(choice, "finish_reason", "") or "")
    content = getattr(message, "content", None)
    if not isinstance(content, str) or not content.strip():
        refusal = getattr(message, "refusal", None)
        reply.status = MALFORMED
        reply.error = f"the model refused: {refusal}" if refusal else "the answer is empty"
        return reply
    reply.content = content
    return reply


def _error_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:500]
        if isinstance(inner, str):
            return inner[:500]
    return str(getattr(exc, "message", "") or exc)[:500]


def _retry_after_seconds(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    # OpenAI sends milliseconds in its own header; everyone else uses the standard one.
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return float(milliseconds) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
