"""An OpenAI-compatible chat-completions endpoint: its settings, its requests and its errors.

Every failure is an `LLMError` of one line that says what to do: a missing setting names the
variables, a refused connection the URL, a server that does not answer in time the seconds it
had (and is not asked again: a busy server only gets busier). `preflight` checks an endpoint
once, before any lab is deployed for it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
from pydantic import BaseModel, Field, ValidationError

from netdojo.errors import NetdojoError

RETRY_DELAY_S = 1.0
PROBE_MAX_TOKENS = 8
MISSING_MODELS = {404, 405, 501}  # servers that do not list models

Message = dict[str, Any]

ENV = {
    "base_url": "NETDOJO_LLM_BASE_URL",
    "model": "NETDOJO_LLM_MODEL",
    "max_tokens": "NETDOJO_LLM_MAX_TOKENS",
    "request_timeout_s": "NETDOJO_LLM_TIMEOUT_S",
}


class LLMError(NetdojoError):
    """The model endpoint is misconfigured, unreachable, or answered with an error."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class LLMConfig(BaseModel):
    base_url: str
    model: str
    api_key: str = ""
    max_turns: int = Field(default=40, ge=1)
    temperature: float = 0.0
    max_tokens: int = Field(default=2048, ge=1, description="tokens per reply")
    request_timeout_s: float = Field(default=120.0, gt=0, description="seconds per request")

    @classmethod
    def from_env(cls, **overrides: Any) -> LLMConfig:
        """Read `NETDOJO_LLM_BASE_URL`, `NETDOJO_LLM_MODEL`, `NETDOJO_LLM_API_KEY` (else
        `OPENAI_API_KEY`), `NETDOJO_LLM_MAX_TOKENS` and `NETDOJO_LLM_TIMEOUT_S`; keyword
        arguments take precedence."""
        env = {name: os.environ.get(variable, "") for name, variable in ENV.items()}
        env["api_key"] = os.environ.get("NETDOJO_LLM_API_KEY") or os.environ.get(
            "OPENAI_API_KEY", ""
        )
        values = {name: value for name, value in env.items() if value} | overrides
        missing = [ENV[name] for name in ("base_url", "model") if not values.get(name)]
        if missing:
            raise LLMError(
                f"set {' and '.join(missing)} (e.g. NETDOJO_LLM_BASE_URL=http://127.0.0.1:8000/v1"
                " NETDOJO_LLM_MODEL=<served model name>)"
            )
        try:
            return cls(**values)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = str(first["loc"][0]) if first["loc"] else ""
            raise LLMError(
                f"{ENV.get(field, field)}={values.get(field)!r}: {first['msg']}"
            ) from None

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/")


class EndpointCheck(BaseModel):
    """What `preflight` found: the models the endpoint lists (None if it lists none) and how
    long the short completion took."""

    url: str
    model: str
    listed: list[str] | None
    seconds: float


class Endpoint:
    """Requests to one endpoint over one HTTP client."""

    def __init__(self, config: LLMConfig, http: httpx2.AsyncClient) -> None:
        self.config = config
        self.http = http

    async def complete(self, payload: Message, retries: int = 1) -> Message:
        """One chat completion's JSON body; a refused connection or a 5xx answer is tried again
        ``retries`` times, a timeout never. The timeout bounds the whole answer, so a server
        that trickles bytes forever times out too."""
        url = f"{self.config.url}/chat/completions"
        while True:
            try:
                with anyio.fail_after(self.config.request_timeout_s):
                    response = await self.http.post(url, json=payload)
            except (TimeoutError, httpx2.TimeoutException) as exc:
                raise self._timeout(url, exc) from None
            except httpx2.TransportError as exc:
                if not retries:
                    raise LLMError(f"cannot reach {url}: {_reason(exc)}") from None
            else:
                if response.status_code < 500 or not retries:
                    return body_of(url, response)
            retries -= 1
            await anyio.sleep(RETRY_DELAY_S)

    async def models(self) -> list[str] | None:
        """The model ids the endpoint lists; None when it does not implement the listing."""
        url = f"{self.config.url}/models"
        try:
            with anyio.fail_after(self.config.request_timeout_s):
                response = await self.http.get(url)
        except (TimeoutError, httpx2.TimeoutException) as exc:
            raise self._timeout(url, exc) from None
        except httpx2.TransportError as exc:
            raise LLMError(f"cannot reach {url}: {_reason(exc)}") from None
        if response.status_code in MISSING_MODELS:
            return None
        body = body_of(url, response)
        data = body.get("data")
        if not isinstance(data, list):
            return None
        return [str(item.get("id")) for item in data if isinstance(item, dict) and item.get("id")]

    def _timeout(self, url: str, exc: Exception) -> LLMError:
        seconds = f"{self.config.request_timeout_s:g}"
        if isinstance(exc, httpx2.ConnectTimeout):
            return LLMError(f"cannot reach {url}: no connection within {seconds} s")
        return LLMError(
            f"{url} gave no answer within {seconds} s (NETDOJO_LLM_TIMEOUT_S sets the limit, "
            "NETDOJO_LLM_MAX_TOKENS the reply's length)"
        )


@asynccontextmanager
async def endpoint(config: LLMConfig) -> AsyncIterator[Endpoint]:
    headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
    timeout = httpx2.Timeout(config.request_timeout_s)
    async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http:
        yield Endpoint(config, http)


async def preflight(config: LLMConfig) -> EndpointCheck:
    """Check once that the endpoint serves ``config.model``: it lists the model (where it lists
    models at all) and answers one short completion. Raises a one-line `LLMError`."""
    started = time.monotonic()
    async with endpoint(config) as ep:
        listed = await ep.models()
        probe = {
            "model": config.model,
            "messages": [{"role": "user", "content": "Answer with one word: ready?"}],
            "max_tokens": PROBE_MAX_TOKENS,
            "temperature": 0.0,
        }
        try:
            body = await ep.complete(probe, retries=0)
        except LLMError as exc:
            if listed is not None and config.model not in listed:
                served = ", ".join(listed[:10]) or "none"
                raise LLMError(
                    f"{config.url} does not serve model {config.model!r} (it lists: {served})"
                ) from exc
            raise
    if not isinstance(body.get("choices"), list) or not body["choices"]:
        raise LLMError(f"{config.url}/chat/completions answered without choices: {_short(body)}")
    return EndpointCheck(
        url=config.url,
        model=config.model,
        listed=listed,
        seconds=round(time.monotonic() - started, 3),
    )


def body_of(url: str, response: httpx2.Response) -> Message:
    """The JSON body of a successful answer; an `LLMError` with the server's message otherwise."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if not response.is_success:
        hint = " (the base URL usually ends in /v1)" if response.status_code == 404 else ""
        raise LLMError(
            f"{url} answered HTTP {response.status_code}: {error_text(response, body)}{hint}",
            status=response.status_code,
        )
    if not isinstance(body, dict):
        raise LLMError(f"{url} answered with no JSON object: {_one_line(response.text)!r}")
    return body


def error_text(response: httpx2.Response, body: Any) -> str:
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return _one_line(str(error["message"]))
    if error:
        return _one_line(str(error))
    if isinstance(body, dict) and body.get("detail"):
        return _one_line(str(body["detail"]))
    return _one_line(response.text) or response.reason_phrase


def _reason(exc: httpx2.TransportError) -> str:
    text = str(exc)
    if "refused" in text.lower() or "all connection attempts failed" in text.lower():
        return "connection refused"
    return _one_line(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else f"{line[:limit]}…"


def _short(body: Message) -> str:
    return _one_line(json.dumps(body))
