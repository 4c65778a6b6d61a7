"""The ``netdojo`` command: thin typer verbs over the library; the work lives in the packages.

A command imports what it uses when it runs, so ``netdojo --version`` and ``--help`` load
neither the labs, the judge, the servers nor the scenario catalogue.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from netdojo import __version__
from netdojo.arena_commands import green, purple, run
from netdojo.console import console
from netdojo.console import err as err_console
from netdojo.errors import NetdojoError
from netdojo.image_commands import image_app
from netdojo.lab_commands import lab_app
from netdojo.mcp_command import mcp
from netdojo.openenv_command import openenv
from netdojo.results_commands import export, leaderboard, merge, report
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
app.add_typer(lab_app, name="lab")
app.add_typer(image_app, name="image")
app.add_typer(scenarios_app, name="scenarios")
app.command()(audit)
app.command()(mcp)
app.command()(openenv)
app.command()(run)
app.command()(green)
app.command()(purple)
app.command()(report)
app.command()(export)
app.command()(leaderboard)
app.command()(merge)


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
    """Check every requirement, and that the device image has every package a family needs;
    exit 0 only when all but the optional ones are ok."""
    from netdojo.judges.packages import packages_check
    from netdojo.labs.provision import doctor as run_doctor
    from netdojo.scenarios import registry

    checks = run_doctor()
    checks.append(packages_check(registry.families().values()))
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


def main() -> None:
    try:
        app()
    except NetdojoError as exc:
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
