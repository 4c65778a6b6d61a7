"""A scripted OpenAI-compatible chat-completions server over real HTTP, and a small MCP server
with stand-ins for the lab tools: what the LLM agent's tests run against."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import uvicorn
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

TOPOLOGY = {"devices": [{"name": "r1", "role": "router"}, {"name": "h1", "role": "host"}]}
HOLD = "hold"  # a script step: answer nothing until the test ends
TRICKLE = "trickle"  # a script step: send a blank every 0.2 s, never ending the body

Step = tuple[int, dict[str, Any]] | str


class ScriptedLLM:
    """Answers `/v1/chat/completions` from a script of steps, and `/v1/models` with ``models``:
    a list of ids, a (status, body) answer, or None for a 404 (servers that list no models).
    Records each request."""

    def __init__(
        self, script: Sequence[Step], models: list[str] | tuple[int, dict[str, Any]] | None = None
    ) -> None:
        self.script = list(script)
        self.models = models
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.model_requests = 0
        self.released = anyio.Event()

    async def completions(self, request: Request) -> Response:
        self.requests.append(await request.json())
        self.headers.append(dict(request.headers))
        if not self.script:
            return JSONResponse({"error": {"message": "script exhausted"}}, status_code=500)
        step = self.script.pop(0)
        if step == HOLD:
            await self.released.wait()
            return JSONResponse({"error": {"message": "released"}}, status_code=500)
        if step == TRICKLE:
            return StreamingResponse(self._trickle(), media_type="application/json")
        assert isinstance(step, tuple)
        status, body = step
        if status == 200 and self.requests[-1].get("stream"):
            return StreamingResponse(_events(body), media_type="text/event-stream")
        return JSONResponse(body, status_code=status)

    async def _trickle(self) -> AsyncIterator[bytes]:
        while not self.released.is_set():
            yield b" "
            await anyio.sleep(0.2)

    async def list_models(self, request: Request) -> Response:
        self.model_requests += 1
        if self.models is None:
            return JSONResponse({"detail": "Not Found"}, status_code=404)
        if isinstance(self.models, tuple):
            return JSONResponse(self.models[1], status_code=self.models[0])
        data = [{"id": name, "object": "model"} for name in self.models]
        return JSONResponse({"object": "list", "data": data})

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self.completions, methods=["POST"]),
                Route("/v1/models", self.list_models, methods=["GET"]),
            ]
        )

    def messages(self, index: int, role: str) -> list[dict[str, Any]]:
        return [m for m in self.requests[index]["messages"] if m["role"] == role]


async def _events(body: dict[str, Any]) -> AsyncIterator[bytes]:
    """A completion as a stream of server-sent chunks: its message in one delta (each tool
    call with its index), then its finish reason and usage, then ``[DONE]``."""
    [choice] = body["choices"]
    delta = dict(choice["message"])
    if "tool_calls" in delta:
        delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(delta["tool_calls"])]
    head = {"id": body["id"], "object": "chat.completion.chunk"}
    chunks = [
        {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {
            **head,
            "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}],
            "usage": {**body["usage"], "total_tokens": sum(body["usage"].values())},
        },
    ]
    for chunk in chunks:
        yield f"data: {json.dumps(chunk)}\n\n".encode()
    yield b"data: [DONE]\n\n"


def free_port() -> int:
    """A loopback port nothing listens on (connections to it are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def serving(fake: ScriptedLLM) -> AsyncIterator[str]:
    """Serve the fake on a free loopback port; yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(fake.app(), log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        with anyio.fail_after(10):
            while not server.started:
                await anyio.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            fake.released.set()
            server.should_exit = True
    sock.close()


def fake_lab(calls: list[str]) -> MCPServer:
    """Small stand-ins for the lab tools; `calls` records which ran."""
    server = MCPServer("fake-lab")

    @server.tool()
    def topology() -> dict[str, Any]:
        """Devices and links."""
        calls.append("topology")
        return TOPOLOGY

    @server.tool()
    def show(device: str, command: str) -> dict[str, Any]:
        """Read state."""
        calls.append("show")
        if device != "r1":
            raise ToolError(f"unknown device {device!r}; devices: r1, h1")
        return {"device": device, "text": "x" * 20_000 if command == "show log" else "ok"}

    @server.tool()
    def ping(source: str, destination: str, count: int = 3) -> dict[str, Any]:
        """Send echo requests."""
        calls.append("ping")
        return {"received": count}

    @server.tool()
    def submit(summary: str) -> dict[str, Any]:
        """End the work."""
        calls.append("submit")
        return {"accepted": True}

    return server


def tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def completion(
    calls: list[dict[str, Any]] | None = None,
    content: str | None = None,
    usage: tuple[int, int] = (0, 0),
    finish_reason: str = "stop",
) -> tuple[int, dict[str, Any]]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1]},
    }
    return 200, body
