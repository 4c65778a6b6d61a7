"""``netdojo report``, ``netdojo export`` and ``netdojo leaderboard``: what a run leaves behind."""

from __future__ import annotations

import contextlib
import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from netdojo.reports.compare import RunComparison, compare_runs
from netdojo.reports.records import Rate
from netdojo.reports.runs import Run, load_run, load_runs

console = Console()
err = Console(stderr=True)
REPORT = "report.html"
SUMMARY = "summary.md"
LEADERBOARD_COLUMNS = ("#", "agent", "score % (CI)", "correct", "safe", "calls", "secs", "inst.",
                       "eps.", "out")  # fmt: skip

RunDir = Annotated[
    Path, typer.Argument(exists=True, file_okay=False, help="A folder written by `netdojo run`.")
]
RunDirs = Annotated[
    list[Path],
    typer.Argument(exists=True, file_okay=False, help="Folders written by `netdojo run`."),
]


class ExportFormat(StrEnum):
    sft = "sft"
    atif = "atif"


class Only(StrEnum):
    solved_safe = "solved-safe"


def evaluation_tools() -> tuple[str, list[dict[str, Any]]]:
    """The instructions and tools an evaluated agent is served, as OpenAI-style definitions."""
    from netdojo.servers.mcp_server import INSTRUCTIONS
    from netdojo.tools.registry import tool_specs

    tools = [
        {
            "type": "function",
            "function": {
                "name": spec.name,
                "description": spec.description,
                "parameters": spec.input_schema(),
            },
        }
        for spec in tool_specs()
    ]
    return INSTRUCTIONS, tools


def _comparisons(runs: list[Run]) -> list[RunComparison]:
    comparisons = []
    for other in runs[1:]:
        try:
            comparisons.append(compare_runs(runs[0], other))
        except ValueError as exc:
            err.print(f"[yellow]no paired comparison:[/] {exc}")
    return comparisons


def write_report(runs: list[Run], html_path: Path, markdown_path: Path | None = None) -> str:
    """Write the HTML report (and the Markdown summary); return the Markdown."""
    from netdojo.reports.markdown import summary_markdown
    from netdojo.reports.redact import environment_secrets, scrub_text
    from netdojo.reports.report import render_report

    comparisons = _comparisons(runs)
    html_path.parent.mkdir(parents=True, exist_ok=True)
    html_path.write_text(render_report(runs, comparisons))
    markdown = scrub_text(summary_markdown(runs, comparisons), environment_secrets())
    if markdown_path is not None:
        markdown_path.write_text(markdown)
    return markdown


def write_run_reports(out: Path) -> list[Path]:
    """After `netdojo run`: the run's `summary.md` and `report.html`, next to its results."""
    write_report([load_run(out)], out / REPORT, out / SUMMARY)
    return [out / SUMMARY, out / REPORT]


def report(
    run_dir: RunDir,
    compare: Annotated[
        list[Path] | None,
        typer.Option(
            exists=True,
            file_okay=False,
            help="Another run to set beside it and compare pair by pair (repeatable).",
        ),
    ] = None,
    output: Annotated[
        Path | None, typer.Option(help=f"The HTML file to write [default: DIR/{REPORT}].")
    ] = None,
) -> None:
    """Write a self-contained HTML report of a run (and others to compare); print its summary."""
    runs = load_runs([run_dir, *(compare or [])])
    target = output or run_dir / REPORT
    print(write_report(runs, target), end="")
    err.print(f"report: {target} ({target.stat().st_size / 1e6:.2f} MB)")


def export(
    run_dirs: RunDirs,
    format: Annotated[ExportFormat, typer.Option("--format", help="sft or atif.")],
    only: Annotated[
        Only | None, typer.Option(help="Keep only episodes solved without a safety violation.")
    ] = None,
    output: Annotated[
        Path | None, typer.Option(help="Write here instead of standard output.")
    ] = None,
) -> None:
    """Export episodes as JSONL: chat messages for fine-tuning (sft) or ATIF trajectories."""
    from netdojo.reports.export import export_lines

    runs = load_runs(run_dirs)
    system, tools = evaluation_tools()
    lines = export_lines(
        runs, format.value, system=system, tools=tools, only=only.value if only else None
    )
    count = 0
    with output.open("w") if output else contextlib.nullcontext(sys.stdout) as out:
        for line in lines:
            out.write(line + "\n")
            count += 1
    err.print(f"exported {count} episodes ({format.value}){f' to {output}' if output else ''}")


def _cell(rate: Rate) -> str:
    return f"{100 * rate.value:.0f} ({100 * rate.ci_low:.0f}-{100 * rate.ci_high:.0f})"


def leaderboard(
    run_dirs: RunDirs,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Merge runs per agent into a ranked table: correct-and-safe score, then effort."""
    from netdojo.reports.leaderboard import leaderboard as build

    board = build(load_runs(list(dict.fromkeys(run_dirs))))
    if as_json:
        print(json.dumps(board.model_dump(mode="json"), indent=1))
        return
    table = Table(
        title="netdojo leaderboard",
        caption=f"{board.composite}. calls, secs: mean tool calls and agent seconds; inst., "
        "eps.: distinct instances and counted episodes; out: episodes left out (not the agent's).",
        box=box.SIMPLE_HEAD,
        padding=(0, 0),
    )
    for name in LEADERBOARD_COLUMNS:
        table.add_column(name, no_wrap=True)
    for e in board.entries:
        table.add_row(
            str(e.rank), e.agent, _cell(e.score), f"{100 * e.correct.value:.0f}",
            f"{100 * e.safe.value:.0f}", f"{e.tool_calls.value:.1f}", f"{e.wall_s.value:.1f}",
            str(e.instances), str(e.episodes), str(e.excluded),
        )  # fmt: skip
    console.print(table)
