"""``netdojo mcp``: serve a practice session or one evaluation episode over stdio or HTTP.

On stdio, standard output carries the protocol only; everything else goes to standard error.
Over HTTP every request needs a bearer token, read from a file or the environment: never from
the command line, where every local user can read it in the process list, and never printed.
The hosting itself is `netdojo.servers.mcp_hosting`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from netdojo.console import err, reap_leftovers
from netdojo.credentials import fresh_token, token_from
from netdojo.errors import NetdojoError

if TYPE_CHECKING:
    from netdojo.labs.provision import StepReport

TOKEN_ENV = "NETDOJO_MCP_TOKEN"
NO_TOKEN_ON_COMMAND_LINE = (
    "a token on the command line is readable by every local user in the process list; "
    f"put it in a file and give --token-file FILE, or set ${TOKEN_ENV}"
)


def _refuse_token_value(value: str | None) -> None:
    if value is not None:
        raise typer.BadParameter(NO_TOKEN_ON_COMMAND_LINE)


def mcp(
    family: Annotated[
        str | None, typer.Option(help="Evaluation mode: serve one episode of this family.")
    ] = None,
    level: Annotated[int, typer.Option(help="Evaluation mode: difficulty level, 1-3.")] = 1,
    seed: Annotated[int, typer.Option(help="Evaluation mode: the instance's seed.")] = 1,
    http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP, not stdio.")] = False,
    host: Annotated[str, typer.Option(help="HTTP: address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP: port to listen on.")] = 8765,
    token_file: Annotated[
        Path | None,
        typer.Option(
            dir_okay=False,
            help=f"HTTP: a file holding the bearer token every request must carry; without it, "
            f"${TOKEN_ENV}, else a new token in a file only you can read (its path is shown).",
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(hidden=True, callback=_refuse_token_value, help=NO_TOKEN_ON_COMMAND_LINE),
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

    if token_file is not None and not http:
        raise typer.BadParameter(
            "a token is for --http; stdio needs none", param_hint="--token-file"
        )
    if family is not None:
        check_choice(family, level, seed)
    served_token = ""
    if http:
        served_token, source = http_token(token_file, port)
        err.print(f"bearer token: {source}")
    require(on_end=_report_done)
    reap_leftovers()
    serve = partial(
        host_mcp,
        family,
        level,
        seed,
        http=http,
        host=host,
        port=port,
        token=served_token,
        idle_minutes=idle_minutes,
        trajectory=trajectory,
        say=err.print,
    )
    anyio.run(serve)


def http_token(token_file: Path | None, port: int) -> tuple[str, str]:
    """The HTTP token and where it came from: ``token_file``, else ``$NETDOJO_MCP_TOKEN``, else
    a new one written to a file only the user can read (one per port, replaced each start)."""
    given = token_from(token_file, TOKEN_ENV)
    if given is not None:
        return given, f"read from {token_file}" if token_file else f"read from ${TOKEN_ENV}"
    from netdojo.labs.paths import sub_dir

    path = sub_dir("mcp") / f"token-{port}"
    made = fresh_token()
    try:
        _write_private(path, made)
    except OSError as exc:
        raise NetdojoError(f"cannot write a new token to {path}: {exc}") from None
    return made, f"new, in {path} (readable by you only)"


def _write_private(path: Path, secret: str) -> None:
    """Write ``secret`` to ``path`` readable by its owner only, also if the file existed."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        os.fchmod(file.fileno(), 0o600)
        file.write(secret + "\n")


def _report_done(report: StepReport) -> None:
    if report.action == "done":
        err.print(f"[dim]{report.name}: {report.detail}[/]")
