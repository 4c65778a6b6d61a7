"""Streamable-HTTP hosting of many MCP endpoints in one process, one path and token each.

Each endpoint lives at ``/episodes/<key>/mcp`` and answers only requests that carry its own
bearer token: a missing, wrong or other endpoint's token gets 401, whose body says which. Host
headers other than the listening address are refused (DNS-rebinding guard), and endpoints can
come and go while the server runs. Served on its own, the host also answers the OAuth
discovery of clients that try it after a 401 with what to send instead.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio
from anyio.abc import TaskGroup
from mcp.server import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from netdojo.servers.bearer import oauth_refusals, refusal_of

PATH = "/episodes/{key}/mcp"


@dataclass
class Endpoint:
    key: str
    token: str = field(repr=False)
    url: str
    app: ASGIApp = field(repr=False)
    stop: anyio.Event = field(default_factory=anyio.Event, repr=False)


class EndpointHost:
    """An ASGI app serving MCP endpoints that are added and removed at run time."""

    def __init__(self, host: str, port: int, public_base_url: str | None = None) -> None:
        self.base_url = (public_base_url or f"http://{_url_host(host)}:{port}").rstrip("/")
        self._allowed_hosts = _allowed_hosts(host, port, public_base_url)
        self._endpoints: dict[str, Endpoint] = {}
        self._group: TaskGroup | None = None
        self.routes: list[BaseRoute] = [Mount("/episodes/{key}", app=self._dispatch)]
        self.app = Starlette(
            routes=[Route("/health", self._health), *oauth_refusals(), *self.routes],
            lifespan=self.lifespan,
        )

    @asynccontextmanager
    async def lifespan(self, _: Starlette) -> AsyncIterator[None]:
        """Keeps the endpoints' session managers running; a host app must enter it."""
        async with anyio.create_task_group() as group:
            self._group = group
            yield
            group.cancel_scope.cancel()
        self._group = None

    async def add(self, key: str, server: MCPServer, token: str | None = None) -> Endpoint:
        """Serve ``server`` at a new path with its own token (generated unless given)."""
        if self._group is None:
            raise RuntimeError("the endpoint host is not running")
        if key in self._endpoints:
            raise ValueError(f"endpoint {key!r} exists")
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=self._allowed_hosts
        )
        app = server.streamable_http_app(streamable_http_path="/mcp", transport_security=security)
        endpoint = Endpoint(
            key=key,
            token=token or secrets.token_urlsafe(32),
            url=f"{self.base_url}{PATH.format(key=key)}",
            app=app,
        )

        async def keep_running(*, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
            async with server.session_manager.run():
                task_status.started()
                await endpoint.stop.wait()

        await self._group.start(keep_running)
        self._endpoints[key] = endpoint
        return endpoint

    def remove(self, key: str) -> None:
        endpoint = self._endpoints.pop(key, None)
        if endpoint is not None:
            endpoint.stop.set()

    async def _health(self, _: Request) -> Response:
        return JSONResponse({"ok": True, "endpoints": len(self._endpoints)})

    async def _dispatch(self, scope: Scope, receive: Receive, send: Send) -> None:
        endpoint = self._endpoints.get(scope.get("path_params", {}).get("key", ""))
        if endpoint is None:
            await JSONResponse({"error": "no such endpoint"}, status_code=404)(scope, receive, send)
            return
        refused = refusal_of(scope, endpoint.token, whose="this endpoint's")
        if refused is not None:
            await refused(scope, receive, send)
            return
        await endpoint.app(scope, receive, send)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _allowed_hosts(host: str, port: int, public_base_url: str | None) -> list[str]:
    hosts = {f"{_url_host(host)}:{port}", f"127.0.0.1:{port}", f"localhost:{port}"}
    if public_base_url:
        netloc = urlsplit(public_base_url).netloc
        hosts |= {netloc, netloc.split(":")[0]} if netloc else set()
    return sorted(hosts)
