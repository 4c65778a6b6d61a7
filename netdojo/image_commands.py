"""``netdojo image …``: container images of the green agent and the built-in purple agents.

Each image is the device image with netdojo installed from a wheelhouse made here
(`netdojo.labs.image.agents`); its entrypoint is ``netdojo green`` or ``netdojo purple NAME``,
which take ``--host``, ``--port`` and ``--card-url`` as AgentBeats' runners pass them.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from netdojo.console import console, err
from netdojo.errors import NetdojoError

if TYPE_CHECKING:
    from netdojo.labs.image.agents import AgentImage

GREEN_PORT = 9009
PURPLE_PORT = 9010
SHOWN_CHARS = 90

image_app = typer.Typer(
    help="Container images of the agents, built on the device image without a registry.",
    no_args_is_help=True,
)


class Role(StrEnum):
    green = "green"
    purple = "purple"


def agent_spec(role: Role, name: str | None = None) -> AgentImage:
    """The image of the green agent, or of the built-in purple agent ``name``."""
    from netdojo.clients.catalogue import known
    from netdojo.labs.image.agents import VENV_BIN, AgentImage

    health = [f"{VENV_BIN}/python", "-m", "netdojo.healthcheck"]
    if role is Role.green:
        if name is not None:
            raise NetdojoError("the green agent's image takes no NAME")
        return AgentImage(
            name="green",
            entrypoint=[f"{VENV_BIN}/netdojo", "green"],
            port=GREEN_PORT,
            healthcheck=[*health, str(GREEN_PORT)],
        )
    if name is None:
        raise NetdojoError("name the built-in purple agent: netdojo image build purple NAME")
    return AgentImage(
        name=f"purple-{known(name)}",
        entrypoint=[f"{VENV_BIN}/netdojo", "purple", name],
        port=PURPLE_PORT,
        healthcheck=[*health, str(PURPLE_PORT)],
    )


@image_app.command("build")
def build(
    role: Annotated[Role, typer.Argument(help="green, or purple with the agent's NAME.")],
    name: Annotated[
        str | None, typer.Argument(help="The built-in purple agent: heuristic, noop, llm, …")
    ] = None,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Build even when this version's image exists.")
    ] = False,
) -> None:
    """Build an agent's image from the device image (`netdojo setup` builds that); an image of
    this netdojo that exists already is kept."""
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from netdojo.labs.image.agents import build_agent_image

    spec = agent_spec(role, name)
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as progress:
        task = progress.add_task(f"{spec.repository}: starting")

        def show(step: str) -> None:
            line = step if len(step) <= SHOWN_CHARS else f"{step[: SHOWN_CHARS - 1]}…"
            progress.update(task, description=f"{spec.repository}: {escape(line)}")

        built = build_agent_image(spec, show, rebuild=rebuild)
    style = "dim" if built.action == "cached" else "green"
    err.print(
        f"[{style}]{built.action}[/] {built.tag} ({built.size_mb:.0f} MB) in {built.seconds:.1f}s"
        + (f", {built.wheels} wheels" if built.wheels else "")
    )
    socket = " -v /var/run/docker.sock:/var/run/docker.sock" if role is Role.green else ""
    err.print(
        f"[dim]run: docker run --rm -p {spec.port}:{spec.port}{socket} {built.tag} "
        f"--host 0.0.0.0 --port {spec.port} --card-url http://HOST:{spec.port}[/]",
        soft_wrap=True,
    )
    console.print(built.tag)
