"""``netdojo lab …``: Kathará lab folders and netdojo labs by hand, as Kathará's commands do.

Every verb reports a failure in one line naming its cause; ``--debug`` adds the traceback.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from netdojo.console import console, err
from netdojo.errors import NetdojoError

if TYPE_CHECKING:
    from anyio.abc import TaskStatus

    from netdojo.labs.devices import DeviceInfo
    from netdojo.labs.labfolder import LabFolder
    from netdojo.labs.runtime import LiveLab
    from netdojo.labs.spec import LabSpec

lab_app = typer.Typer(
    help="Run Kathará lab folders and netdojo labs by hand.", no_args_is_help=True
)

Debug = Annotated[bool, typer.Option("--debug", help="On an error, show its full traceback.")]
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Stopped(NetdojoError):
    """A signal stopped a command; what it had created is gone."""


@contextmanager
def reported(debug: bool) -> Iterator[None]:
    """Print a failure as one line (with its traceback under ``--debug``) and exit 2."""
    try:
        yield
    except (typer.Exit, typer.Abort):
        raise
    except KeyboardInterrupt:
        err.print("[bold red]interrupted[/]")
        raise typer.Exit(130) from None
    except Exception as exc:
        if debug:
            err.print_exception()
        err.print(f"[bold red]error:[/] {escape(_one_line(exc, debug))}", soft_wrap=True)
        raise typer.Exit(2) from None


def _one_line(exc: Exception, debug: bool) -> str:
    if isinstance(exc, NetdojoError):
        return str(exc)
    from netdojo.labs.deployment import explain

    hint = "" if debug else " (run again with --debug for the traceback)"
    return f"{explain(exc)}{hint}"


@lab_app.command("up")
def lab_up(
    folder: Annotated[
        Path, typer.Argument(exists=True, file_okay=False, help="Kathará lab folder")
    ],
    name: Annotated[
        str | None,
        typer.Option(
            help="Name of the deployed lab; by default one made from LAB_NAME or the folder."
        ),
    ] = None,
    debug: Debug = False,
) -> None:
    """Deploy a Kathará lab folder; it stays up until `netdojo lab down NAME`."""
    import anyio

    from netdojo.console import reap_leftovers
    from netdojo.labs.deployment import name_in_use
    from netdojo.labs.labfolder import load_lab_folder
    from netdojo.labs.names import check_lab_name, readable_name

    with reported(debug):
        loaded = load_lab_folder(folder)
        for warning in loaded.warnings:
            err.print(f"[yellow]warning:[/] {escape(warning)}", soft_wrap=True, highlight=False)
        if name is not None:
            check_lab_name(name)
        reap_leftovers()
        lab_name = name or readable_name(loaded.title, name_in_use)
        _print_about(loaded, lab_name)
        with console.status(f"deploying {lab_name} ({len(loaded.spec.devices)} devices)"):
            live, table = anyio.run(_up, loaded.spec, lab_name)
        console.print(table)
        console.print(
            f"lab [bold]{escape(live.name)}[/] is up (deploy {live.timings.deploy_s:.1f}s, "
            f"startup {live.timings.startup_s:.1f}s); "
            f"`netdojo lab connect {escape(live.name)} DEVICE` opens a shell in a device"
        )


async def _up(spec: LabSpec, name: str) -> tuple[LiveLab, Table]:
    """Deploy until done or until a stop signal, which removes what the deploy created.

    Signals are caught until the deploy and its cleanup are over: a second Ctrl-C cannot cut
    the cleanup short.
    """
    import anyio

    from netdojo.labs.devices import describe
    from netdojo.labs.runtime import start_lab

    stopped_by: list[int] = []
    lives: list[LiveLab] = []
    failed: list[Exception] = []
    deploying = anyio.CancelScope()
    async with anyio.create_task_group() as group:

        async def watch(*, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
            with anyio.open_signal_receiver(*STOP_SIGNALS) as received:
                task_status.started()
                async for signum in received:
                    stopped_by.append(signum)
                    deploying.cancel()

        await group.start(watch)
        with deploying:
            try:
                lives.append(await start_lab(spec, name=name, persistent=True))
            except Exception as exc:  # raised past the task group, which would wrap it
                failed.append(exc)
        group.cancel_scope.cancel()
    if failed:
        raise failed[0]
    if not lives:
        raise Stopped(
            f"stopped by {signal.Signals(stopped_by[0]).name}: lab {name} was not deployed, "
            "and what its deploy had created is removed"
        )
    return lives[0], device_table(await describe(lives[0]))


def _print_about(loaded: LabFolder, name: str) -> None:
    """The lab's own words, as Kathará shows them when a lab starts."""
    table = Table.grid(padding=(0, 2))
    table.add_row("[bold]lab[/]", escape(name))
    if loaded.title != name:
        table.add_row("[bold]title[/]", escape(loaded.title))
    for key, value in loaded.about.items():
        table.add_row(f"[bold]{key}[/]", escape(value))
    console.print(table)


def device_table(devices: list[DeviceInfo], title: str | None = None) -> Table:
    """One row per device; its interfaces one per line, with link, MAC and addresses."""
    table = Table("device", "state", "image", "interface", "link", "MAC", "addresses", title=title)
    for device in devices:
        state = "[green]running[/]" if device.state == "running" else f"[red]{device.state}[/]"
        table.add_row(
            device.name,
            state,
            escape(device.image),
            "\n".join(i.name for i in device.interfaces),
            "\n".join(i.link for i in device.interfaces),
            "\n".join(i.mac for i in device.interfaces),
            "\n".join(", ".join(i.addresses) for i in device.interfaces),
        )
    return table


@lab_app.command("info")
def lab_info(
    name: Annotated[str, typer.Argument(help="Lab name")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    debug: Debug = False,
) -> None:
    """Show a running lab's devices: state, image, interfaces, links, MACs and addresses."""
    import anyio

    from netdojo.labs.devices import describe
    from netdojo.labs.runtime import find_lab

    with reported(debug):
        live = find_lab(name)
        devices = anyio.run(describe, live)
    if as_json:
        print(json.dumps([device.model_dump() for device in devices], indent=2))
        return
    console.print(device_table(devices, title=f"lab {escape(name)}"))


@lab_app.command("connect")
def lab_connect(
    name: Annotated[str, typer.Argument(help="Lab name")],
    device: Annotated[str, typer.Argument(help="Device name")],
    debug: Debug = False,
) -> None:
    """Open an interactive shell in a device (`docker exec -it` with the device's shell)."""
    import sys

    from netdojo.labs.devices import connect_argv
    from netdojo.labs.runtime import find_lab

    with reported(debug):
        if not sys.stdin.isatty():
            raise NetdojoError(
                "lab connect needs a terminal; for one command use "
                f"`netdojo lab exec {name} {device} -- COMMAND`"
            )
        argv = connect_argv(find_lab(name), device)
    sys.stdout.flush()
    os.execvp(argv[0], argv)


@lab_app.command("exec")
def lab_exec(
    name: Annotated[str, typer.Argument(help="Lab name")],
    device: Annotated[str, typer.Argument(help="Device name")],
    command: Annotated[list[str], typer.Argument(help="Command and arguments (after --)")],
    timeout: Annotated[float, typer.Option(help="Seconds before the command is killed.")] = 30.0,
    debug: Debug = False,
) -> None:
    """Run a command inside a device (no shell) and print its output."""
    from netdojo.labs.runtime import find_lab

    with reported(debug):
        result = find_lab(name).exec_sync(device, command, timeout=timeout)
    if result.stdout:
        print(result.stdout, end="")
    if result.stderr:
        err.print(result.stderr, end="", markup=False, highlight=False)
    if result.timed_out:
        err.print(f"[red]timed out after {timeout:g}s[/]")
    raise typer.Exit(result.exit_code if result.exit_code is not None else 1)


@lab_app.command("down")
def lab_down(name: Annotated[str, typer.Argument(help="Lab name")], debug: Debug = False) -> None:
    """Tear a lab down: its own containers and networks, nothing else."""
    from netdojo.labs.teardown import tear_down

    with reported(debug), console.status(f"tearing down {name}"):
        tear_down(name)
    console.print(f"lab [bold]{escape(name)}[/] is down")


@lab_app.command("list")
def lab_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    debug: Debug = False,
) -> None:
    """List netdojo's labs with their owner and devices."""
    from netdojo.labs.reaper import netdojo_labs

    with reported(debug):
        labs = netdojo_labs()
    if as_json:
        print(json.dumps([info.model_dump() for info in labs], indent=2))
        return
    table = Table("name", "devices", "owner", "state")
    for info in labs:
        state = "[green]live[/]" if info.alive else "[red]orphaned[/]"
        table.add_row(info.name or info.lab_hash, ", ".join(info.devices), info.owner, state)
    console.print(table)
