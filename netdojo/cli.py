"""The ``netdojo`` command: thin typer verbs over the library; the work lives in the packages.

A command imports what it uses when it runs, so ``netdojo --version`` and ``--help`` load
neither the labs, the judge, the servers nor the scenario catalogue.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from netdojo import __version__
from netdojo.arena_commands import green, purple, run
from netdojo.console import console
from netdojo.console import err as err_console
from netdojo.errors import NetdojoError
from netdojo.mcp_command import mcp
from netdojo.results_commands import export, leaderboard, report
from netdojo.scenario_commands import audit, scenarios_app

if TYPE_CHECKING:
    from netdojo.labs.provision import StepReport

app = typer.Typer(
    name="netdojo",
    help="An arena where AI agents configure and repair live emulated networks.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
lab_app = typer.Typer(
    help="Run Kathará lab folders and netdojo labs by hand.", no_args_is_help=True
)
app.add_typer(lab_app, name="lab")
app.add_typer(scenarios_app, name="scenarios")
app.command()(audit)
app.command()(mcp)
app.command()(run)
app.command()(green)
app.command()(purple)
app.command()(report)
app.command()(export)
app.command()(leaderboard)


def _version(value: bool) -> None:
    if value:
        console.print(f"netdojo {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """netdojo: live network labs, typed tools and hidden tests for AI agents."""


@app.command()
def setup(
    kubernetes: Annotated[
        bool,
        typer.Option(
            "--kubernetes",
            help="Also build kube-apiserver, kubectl and etcd with Go (minutes; once per release).",
        ),
    ] = False,
) -> None:
    """Provision what labs need: Docker engine, device image, network plugin, settings."""
    from rich.progress import Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn

    from netdojo.labs.provision import setup as run_setup

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        tasks: dict[str, TaskID] = {}

        def start(name: str) -> None:
            tasks[name] = progress.add_task(f"{name}: working", total=1)

        def end(report: StepReport) -> None:
            progress.remove_task(tasks[report.name])
            style = {"skipped": "dim", "done": "green", "failed": "bold red"}[report.action]
            progress.console.print(
                f"[{style}]{report.name}: {report.action}[/] ({report.seconds:.1f}s) "
                f"{report.detail}",
                soft_wrap=True,
            )

        reports = run_setup(start, end, kubernetes=kubernetes)
    if any(r.action == "failed" for r in reports):
        raise typer.Exit(1)


@app.command()
def doctor(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Check every requirement; exit 0 only when all but the optional ones are ok."""
    from netdojo.labs.provision import doctor as run_doctor

    checks = run_doctor()
    ok = all(c.ok or c.optional for c in checks)
    if as_json:
        payload = {
            "ok": ok,
            "checks": [c.model_dump(include={"name", "ok", "detail", "optional"}) for c in checks],
        }
        print(json.dumps(payload, indent=2))
    else:
        for check in checks:
            label, style = (
                ("ok", "green")
                if check.ok
                else ("optional", "yellow")
                if check.optional
                else ("missing", "red")
            )
            fix = f"  [yellow]fix:[/] {check.fix}" if check.fix and not check.ok else ""
            console.print(f"[{style}]{label:>8}[/]  {check.name:<14} {check.detail}{fix}")
    raise typer.Exit(0 if ok else 1)


@app.command()
def reap() -> None:
    """Remove labs whose owner process is gone, with their networks, bridges and rules."""
    from netdojo.labs.reaper import reap as run_reap

    report = run_reap()
    console.print(report.line())
    for name in report.labs:
        console.print(f"  - {name}")


@app.command()
def demo() -> None:
    """Deploy a small OSPF lab, watch it converge, ping across it, print timings, tear it down."""
    from netdojo.demo import run_demo

    run_demo(console)


@lab_app.command("up")
def lab_up(
    folder: Annotated[
        Path, typer.Argument(exists=True, file_okay=False, help="Kathará lab folder")
    ],
    name: Annotated[str | None, typer.Option(help="Name of the deployed lab.")] = None,
) -> None:
    """Deploy a Kathará lab folder; it stays up until `netdojo lab down NAME`."""
    import anyio

    from netdojo.labs.labfolder import load_lab_folder
    from netdojo.labs.runtime import start_lab

    spec = load_lab_folder(folder)
    with console.status(f"deploying {spec.name} ({len(spec.devices)} devices)"):
        live = anyio.run(lambda: start_lab(spec, name=name or spec.name, persistent=True))
    console.print(
        f"lab [bold]{live.name}[/] is up: {', '.join(live.devices)} "
        f"(deploy {live.timings.deploy_s:.1f}s, startup {live.timings.startup_s:.1f}s)"
    )


@lab_app.command("exec")
def lab_exec(
    name: Annotated[str, typer.Argument(help="Lab name")],
    device: Annotated[str, typer.Argument(help="Device name")],
    command: Annotated[list[str], typer.Argument(help="Command and arguments (after --)")],
    timeout: Annotated[float, typer.Option(help="Seconds before the command is killed.")] = 30.0,
) -> None:
    """Run a command inside a device (no shell) and print its output."""
    from netdojo.labs.runtime import find_lab

    result = find_lab(name).exec_sync(device, command, timeout=timeout)
    if result.stdout:
        print(result.stdout, end="")
    if result.stderr:
        err_console.print(result.stderr, end="", markup=False, highlight=False)
    if result.timed_out:
        err_console.print(f"[red]timed out after {timeout:g}s[/]")
    raise typer.Exit(result.exit_code if result.exit_code is not None else 1)


@lab_app.command("down")
def lab_down(name: Annotated[str, typer.Argument(help="Lab name")]) -> None:
    """Tear a lab down."""
    from netdojo.labs.teardown import tear_down

    with console.status(f"tearing down {name}"):
        tear_down(name)
    console.print(f"lab [bold]{name}[/] is down")


@lab_app.command("list")
def lab_list(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """List netdojo's labs with their owner and devices."""
    from netdojo.labs.reaper import netdojo_labs

    labs = netdojo_labs()
    if as_json:
        print(json.dumps([info.model_dump() for info in labs], indent=2))
        return
    table = Table("name", "devices", "owner", "state")
    for info in labs:
        state = "[green]live[/]" if info.alive else "[red]orphaned[/]"
        table.add_row(info.name or info.lab_hash, ", ".join(info.devices), info.owner, state)
    console.print(table)


def main() -> None:
    try:
        app()
    except NetdojoError as exc:
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
