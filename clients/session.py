"""The client side of netdojo's MCP tools, as purple agents use them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Protocol

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from netdojo.tools.contract import ListedTool


class ToolCallError(Exception):
    """The server refused or failed a call; the message is the text the model would read."""


class Session(Protocol):
    """What a policy works through: an MCP session, or tool calls travelling as messages."""

    calls: int

    async def call(self, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]: ...

    async def list_tools(self) -> list[ListedTool]: ...


class ToolSession:
    """Calls lab tools by name and returns their structured results."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.calls = 0
        self.submitted = False

    async def call(self, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        self.calls += 1
        result = await self.client.call_tool(tool, arguments or {})
        text = "".join(getattr(part, "text", "") for part in result.content)
        if result.is_error:
            raise ToolCallError(text)
        self.submitted = self.submitted or tool == "submit"
        structured = result.structured_content or {}
        return dict(structured)

    async def finish(self, summary: str) -> None:
        """Submit ``summary``, unless the policy submitted already (with an answer, say)."""
        if not self.submitted:
            await self.call("submit", {"summary": summary})

    async def list_tools(self) -> list[ListedTool]:
        """Every tool the server lists, following pagination."""
        tools: list[ListedTool] = []
        cursor: str | None = None
        while True:
            page = await self.client.list_tools(cursor=cursor)
            tools += [
                ListedTool(name=t.name, description=t.description, input_schema=t.input_schema)
                for t in page.tools
            ]
            cursor = page.next_cursor
            if not cursor:
                return tools


@asynccontextmanager
async def connect(url: str, token: str) -> AsyncIterator[ToolSession]:
    """A session on an episode's streamable-HTTP endpoint with its bearer token."""
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(120.0)) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield ToolSession(client)
