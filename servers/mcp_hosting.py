"""Hosting MCP for `netdojo mcp`: a practice session, or one evaluation episode, on stdio or
streamable HTTP, until the client leaves or a stop signal comes.

An evaluation episode's id, and so its HTTP endpoint's path, is random: it names no scenario.
On stdio the client kills the process soon after it leaves, so the lab is handed to a process
of its own to tear down.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
from mcp.server import MCPServer

from netdojo.judges.episode import Episode, new_episode_id, open_episode
from netdojo.scenarios.generate import generate
from netdojo.servers.endpoints import EndpointHost
from netdojo.servers.mcp_server import episode_server, practice_server
from netdojo.servers.practice import PracticeSession
from netdojo.servers.serving import serve_uvicorn, until_signal

Say = Callable[[str], None]


async def host_mcp(
    family: str | None,
    level: int,
    seed: int,
    *,
    http: bool,
    host: str,
    port: int,
    token: str,
    idle_minutes: float,
    trajectory: Path | None,
    say: Say,
) -> None:
    """Serve practice (no ``family``) or one episode of ``family`` at ``level`` and ``seed``;
    ``say`` hears what a person running it should know (never on standard output)."""
    episode: Episode | None = None
    session = PracticeSession()
    async with anyio.create_task_group() as group:
        group.start_soon(_cancel_on_signal, group.cancel_scope)
        try:
            if family is None:
                server, key = practice_server(session), "practice"
                if http:
                    group.start_soon(session.end_when_idle, idle_minutes * 60)
            else:
                scenario = generate(family, level, seed)
                say(f"staging {family} L{level} seed {seed} ({scenario.id}) …")
                key = new_episode_id()
                episode = await open_episode(scenario, key)
                say(f"ready in {episode.ready_s:.1f}s")
                server = episode_server(episode.view())
            if http:
                await _serve_http(server, key, host, port, token, say)
            else:
                await server.run_stdio_async()
        finally:
            # On stdio the client kills the process soon after it leaves: hand the lab over.
            with anyio.CancelScope(shield=True):
                await session.close(detach=not http)
                if episode is not None:
                    if trajectory is not None:
                        episode.trajectory.write(trajectory)
                    await episode.close(detach=not http)
        group.cancel_scope.cancel()


async def _cancel_on_signal(scope: anyio.CancelScope) -> None:
    await until_signal()
    scope.cancel()


async def _serve_http(
    server: MCPServer, key: str, host: str, port: int, token: str, say: Say
) -> None:
    endpoints = EndpointHost(host, port)
    async with serve_uvicorn(endpoints.app, host, port):
        endpoint = await endpoints.add(key, server, token)
        say(f"MCP endpoint: {endpoint.url}")
        await anyio.sleep_forever()
