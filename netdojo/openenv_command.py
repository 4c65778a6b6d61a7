"""``netdojo openenv``: serve episodes as an OpenEnv environment (`netdojo.servers.openenv_env`)."""

from __future__ import annotations

from typing import Annotated

import typer

from netdojo.console import err, reap_leftovers
from netdojo.credentials import is_loopback
from netdojo.errors import NetdojoError


def openenv(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    family: Annotated[
        str, typer.Option(help="The family a reset opens unless it names another.")
    ] = "static-routing",
    level: Annotated[
        int, typer.Option(help="The level a reset opens unless it names another.")
    ] = 1,
    max_tool_calls: Annotated[int, typer.Option(min=1, help="Tool calls per episode.")] = 60,
    time_budget: Annotated[float, typer.Option(min=1, help="Seconds per episode.")] = 600.0,
    shaped: Annotated[
        bool, typer.Option(help="Reward each state-changing step's progress.")
    ] = False,
    sessions: Annotated[
        int, typer.Option(min=1, help="Sessions at once; each holds a lab while it lasts.")
    ] = 1,
) -> None:
    """Serve episodes as an OpenEnv environment: one lab per WebSocket session (/ws).

    A client (`NetdojoEnvClient` of netdojo.servers.openenv_client, or any OpenEnv client)
    resets with family, level and seed and steps with call_tool actions; the lab is torn down
    when its session closes. Needs the `openenv` extra of netdojo (openenv-core). The server
    takes no token: keep it on loopback.
    """
    import anyio

    try:
        from netdojo.servers.openenv_env import NetdojoEnvironment, openenv_app
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] != "openenv":
            raise
        raise NetdojoError("OpenEnv is not installed: pip install 'netdojo[openenv]'") from None
    from functools import partial

    from netdojo.labs.provision import require
    from netdojo.reports.records import Budgets
    from netdojo.scenarios.generate import check_choice
    from netdojo.servers.serving import serve_uvicorn, until_signal

    check_choice(family, level, 0)
    budgets = Budgets(max_tool_calls=max_tool_calls, time_budget_s=time_budget)
    require()
    reap_leftovers()
    if not is_loopback(host):
        err.print(
            f"[bold yellow]warning:[/] the OpenEnv server listens on {host} without "
            "authentication: anyone who reaches it can deploy labs on this machine and run "
            "commands in them."
        )
    episodes = partial(NetdojoEnvironment, family, level, budgets=budgets, shaped=shaped)
    app = openenv_app(episodes, sessions)

    async def serve() -> None:
        async with serve_uvicorn(app, host, port):
            err.print(f"OpenEnv environment: http://{host}:{port} (sessions at /ws)")
            await until_signal()

    anyio.run(serve)
