"""``netdojo mcp``: serve a practice session or one evaluation episode over stdio or HTTP.

On stdio, standard output carries the protocol only; everything else goes to standard error.
An evaluation episode's id, and so its HTTP endpoint's path, is random: it names no scenario.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import anyio
import typer
from rich.console import Console

from netdojo.labs.provision import StepReport, require
from netdojo.run_folder import reap_leftovers
from netdojo.scenarios.generate import check_choice, generate

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from netdojo.judges.episode import Episode

err = Console(stderr=True)
TOKEN_ENV = "NETDOJO_MCP_TOKEN"


def mcp(
    family: Annotated[
        str | None, typer.Option(help="Evaluation mode: serve one episode of this family.")
    ] = None,
    level: Annotated[int, typer.Option(help="Evaluation mode: difficulty level, 1-3.")] = 1,
    seed: Annotated[int, typer.Option(help="Evaluation mode: the instance's seed.")] = 1,
    http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP, not stdio.")] = False,
    host: Annotated[str, typer.Option(help="HTTP: address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP: port to listen on.")] = 8765,
    token: Annotated[
        str | None,
        typer.Option(help=f"HTTP: the bearer token (default: ${TOKEN_ENV}, else a new one)."),
    ] = None,
    idle_minutes: Annotated[
        float, typer.Option(help="HTTP practice: end a scenario after this long without calls.")
    ] = 30.0,
    trajectory: Annotated[
        Path | None,
        typer.Option(help="Evaluation mode: write the trajectory (JSON) here at the end."),
    ] = None,
) -> None:
    """Serve netdojo's tools over MCP: practice mode, or one episode with --family."""
    if family is not None:
        check_choice(family, level, seed)
    require(on_end=_report_done)
    reap_leftovers(err)
    token = token or os.environ.get(TOKEN_ENV) or secrets.token_urlsafe(24)
    anyio.run(_serve, family, level, seed, http, host, port, token, idle_minutes, trajectory)


def _report_done(report: StepReport) -> None:
    if report.action == "done":
        err.print(f"[dim]{report.name}: {report.detail}[/]")


async def _serve(
    family: str | None,
    level: int,
    seed: int,
    http: bool,
    host: str,
    port: int,
    token: str,
    idle_minutes: float,
    trajectory: Path | None,
) -> None:
    from netdojo.judges.episode import new_episode_id, open_episode
    from netdojo.servers.mcp_server import evaluation_server, practice_server
    from netdojo.servers.practice import PracticeSession

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
                err.print(f"staging {family} L{level} seed {seed} ({scenario.id}) …")
                key = new_episode_id()
                episode = await open_episode(scenario, key)
                err.print(f"ready in {episode.ready_s:.1f}s")
                server = evaluation_server(episode.tools)
            if http:
                await _serve_http(server, key, host, port, token)
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
    from netdojo.servers.serving import until_signal

    await until_signal()
    scope.cancel()


async def _serve_http(server: MCPServer, key: str, host: str, port: int, token: str) -> None:
    from netdojo.servers.endpoints import EndpointHost
    from netdojo.servers.serving import serve_uvicorn

    endpoints = EndpointHost(host, port)
    async with serve_uvicorn(endpoints.app, host, port):
        endpoint = await endpoints.add(key, server, token)
        err.print(f"MCP endpoint: {endpoint.url}")
        err.print(f"bearer token: {token}")
        await anyio.sleep_forever()
