"""A purple agent driven by any OpenAI-compatible chat-completions endpoint.

`LLMAgent` is a `Policy`: it offers the session's MCP tools to the model as functions, runs the
calls the model makes and sends the results back, until the model calls `submit` (its
`summary` is returned; the caller submits) or answers without calling a tool (that text is the
summary), or `max_turns` is spent. It speaks plain HTTP, so vLLM, Ollama, the llama.cpp server
and OpenAI all work.
"""

from __future__ import annotations

import json
import os
from typing import Any

import anyio
import httpx2
from pydantic import BaseModel

from netdojo.clients.agents import Task
from netdojo.clients.session import ToolCallError, ToolSession

SYSTEM_PROMPT = """\
You are a network engineer working on a live network of FRR routers and Linux hosts through \
tools. Find and fix the problem described in the task.
- Inspect before you change anything: topology, interfaces, routes, protocol state, logs.
- Change as little as needed to fix the problem, on the devices that need it.
- Do not break other traffic: keep every flow that works today working.
- Verify the fix with ping (and traceroute where paths matter) between the affected endpoints.
- When done, call submit with a short summary of the cause and what you changed."""

SUBMIT_TOOL = "submit"
MAX_RESULT_CHARS = 12_000
RETRY_DELAY_S = 1.0

Message = dict[str, Any]


class LLMError(Exception):
    """The model endpoint is misconfigured, unreachable, or answered with an error."""


class LLMConfig(BaseModel):
    base_url: str
    model: str
    api_key: str = ""
    max_turns: int = 40
    temperature: float = 0.0
    request_timeout_s: float = 120.0

    @classmethod
    def from_env(cls, **overrides: Any) -> LLMConfig:
        """Read `NETDOJO_LLM_BASE_URL`, `NETDOJO_LLM_MODEL` and `NETDOJO_LLM_API_KEY`
        (else `OPENAI_API_KEY`); keyword arguments take precedence."""
        env = {
            "base_url": os.environ.get("NETDOJO_LLM_BASE_URL", ""),
            "model": os.environ.get("NETDOJO_LLM_MODEL", ""),
            "api_key": os.environ.get("NETDOJO_LLM_API_KEY") or os.environ.get("OPENAI_API_KEY"),
        }
        values = {name: value for name, value in env.items() if value} | overrides
        required = {"base_url": "NETDOJO_LLM_BASE_URL", "model": "NETDOJO_LLM_MODEL"}
        missing = [variable for name, variable in required.items() if not values.get(name)]
        if missing:
            raise LLMError(
                f"set {' and '.join(missing)} (e.g. NETDOJO_LLM_BASE_URL=http://127.0.0.1:8000/v1"
                " NETDOJO_LLM_MODEL=<served model name>)"
            )
        return cls(**values)


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    turns: int = 0


class LLMAgent:
    """A tool-calling loop; `usage` accumulates over every episode the agent runs."""

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self.usage = Usage()

    async def __call__(self, session: ToolSession, task: Task) -> str:
        tools = await function_schemas(session)
        messages: list[Message] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": task.brief},
        ]
        headers = {"Authorization": f"Bearer {self.config.api_key}"} if self.config.api_key else {}
        timeout = httpx2.Timeout(self.config.request_timeout_s)
        async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http:
            for _ in range(self.config.max_turns):
                reply = await self._complete(http, messages, tools)
                messages.append(reply)
                if not reply.get("tool_calls"):
                    return str(reply.get("content") or "")
                for call in reply["tool_calls"]:
                    summary = submitted_summary(call)
                    if summary is not None:
                        return summary
                    messages.append(await run_tool_call(session, call))
        return f"stopped after {self.config.max_turns} turns without calling submit"

    async def _complete(
        self, http: httpx2.AsyncClient, messages: list[Message], tools: list[Message]
    ) -> Message:
        """One chat completion; returns the assistant message to append to the history."""
        url = f"{self.config.base_url.rstrip('/')}/chat/completions"
        payload = {
            "model": self.config.model,
            "messages": messages,
            "tools": tools,
            "temperature": self.config.temperature,
        }
        body = completion_body(url, await post(http, url, payload))
        self._count(body.get("usage") or {})
        return assistant_message(url, body)

    def _count(self, usage: dict[str, Any]) -> None:
        self.usage.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.usage.completion_tokens += int(usage.get("completion_tokens") or 0)
        self.usage.turns += 1


async def function_schemas(session: ToolSession) -> list[Message]:
    """Every MCP tool of the session as an OpenAI function (following pagination)."""
    functions: list[Message] = []
    cursor: str | None = None
    while True:
        page = await session.client.list_tools(cursor=cursor)
        functions += [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description or "",
                    "parameters": tool.input_schema,
                },
            }
            for tool in page.tools
        ]
        cursor = page.next_cursor
        if not cursor:
            return functions


async def post(
    http: httpx2.AsyncClient, url: str, payload: Message, retries: int = 1
) -> httpx2.Response:
    """POST, retried on a connection error or a 5xx answer."""
    try:
        response = await http.post(url, json=payload)
    except httpx2.TransportError as exc:
        if not retries:
            raise LLMError(f"cannot reach {url}: {type(exc).__name__}: {exc}") from exc
    else:
        if response.status_code < 500 or not retries:
            return response
    await anyio.sleep(RETRY_DELAY_S)
    return await post(http, url, payload, retries - 1)


def completion_body(url: str, response: httpx2.Response) -> Message:
    """The JSON body of a successful answer; an `LLMError` with the server's message otherwise."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if not response.is_success:
        raise LLMError(f"{url} answered HTTP {response.status_code}: {error_text(response, body)}")
    if not isinstance(body, dict):
        raise LLMError(f"{url} answered with no JSON object: {response.text[:500]!r}")
    return body


def error_text(response: httpx2.Response, body: Any) -> str:
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    if error:
        return str(error)
    return response.text[:500] or response.reason_phrase


def assistant_message(url: str, body: Message) -> Message:
    """The first choice's message, reduced to what the endpoint accepts back in the history."""
    try:
        message = body["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        raise LLMError(f"{url} answered without a message: {json.dumps(body)[:500]}") from None
    reply: Message = {"role": "assistant", "content": message.get("content") or ""}
    calls = message.get("tool_calls") or []
    if calls:
        reply["tool_calls"] = [
            {"type": "function", **call, "id": call.get("id") or f"call_{index}"}
            for index, call in enumerate(calls)
        ]
    return reply


def submitted_summary(call: Message) -> str | None:
    """The summary of a well-formed `submit` call, which the caller, not the agent, submits."""
    function = call.get("function") or {}
    if function.get("name") != SUBMIT_TOOL:
        return None
    try:
        return str(parse_arguments(function.get("arguments")).get("summary", ""))
    except ValueError:
        return None


async def run_tool_call(session: ToolSession, call: Message) -> Message:
    """Run one tool call; the `tool` message carries its JSON result or the error text."""
    function = call.get("function") or {}
    name = str(function.get("name", ""))
    try:
        arguments = parse_arguments(function.get("arguments"))
    except ValueError as exc:
        return tool_message(call, f"error: {exc}; call {name} again with a JSON object")
    try:
        result = await session.call(name, arguments)
    except ToolCallError as exc:
        return tool_message(call, f"error: {exc}")
    return tool_message(call, truncate(json.dumps(result, ensure_ascii=False)))


def parse_arguments(raw: Any) -> dict[str, Any]:
    """A call's arguments: a JSON object in a string (OpenAI) or already decoded (some servers)."""
    if isinstance(raw, dict):
        return raw
    try:
        arguments = json.loads(raw or "{}")
    except (json.JSONDecodeError, TypeError) as exc:
        raise ValueError(f"the arguments are not valid JSON ({exc}): {str(raw)[:200]!r}") from None
    if not isinstance(arguments, dict):
        raise ValueError(f"the arguments must be a JSON object, not {type(arguments).__name__}")
    return arguments


def tool_message(call: Message, content: str) -> Message:
    return {"role": "tool", "tool_call_id": call["id"], "content": content}


def truncate(text: str) -> str:
    if len(text) <= MAX_RESULT_CHARS:
        return text
    return (
        f"{text[:MAX_RESULT_CHARS]}\n[truncated: {MAX_RESULT_CHARS} of {len(text)} characters "
        "shown; ask for less, e.g. a narrower show command]"
    )
