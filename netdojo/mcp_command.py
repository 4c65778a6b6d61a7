"""``netdojo mcp``: serve a practice session or one evaluation episode over stdio or HTTP.

On stdio, standard output carries the protocol only; everything else goes to standard error.
The hosting itself is `netdojo.servers.mcp_hosting`.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from netdojo.console import err, reap_leftovers

if TYPE_CHECKING:
    from netdojo.labs.provision import StepReport

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
    from functools import partial

    import anyio

    from netdojo.labs.provision import require
    from netdojo.scenarios.generate import check_choice
    from netdojo.servers.mcp_hosting import host_mcp

    if family is not None:
        check_choice(family, level, seed)
    require(on_end=_report_done)
    reap_leftovers()
    token = token or os.environ.get(TOKEN_ENV) or secrets.token_urlsafe(24)
    serve = partial(
        host_mcp,
        family,
        level,
        seed,
        http=http,
        host=host,
        port=port,
        token=token,
        idle_minutes=idle_minutes,
        trajectory=trajectory,
        say=err.print,
    )
    anyio.run(serve)


def _report_done(report: StepReport) -> None:
    if report.action == "done":
        err.print(f"[dim]{report.name}: {report.detail}[/]")
