"""``netdojo report``, ``export``, ``leaderboard`` and ``merge``: what a run leaves behind."""

from __future__ import annotations

import contextlib
import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich import box
from rich.table import Table

from netdojo.console import console, err

if TYPE_CHECKING:
    from netdojo.reports.records import Rate

LEADERBOARD_COLUMNS = ("#", "agent", "score % (CI)", "correct", "safe", "f.alarm", "loc F1",
                       "cause F1", "calls", "secs", "inst.", "eps.", "out")  # fmt: skip

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
        Path | None, typer.Option(help="The HTML file to write [default: DIR/report.html].")
    ] = None,
) -> None:
    """Write a self-contained HTML report of a run (and others to compare); print its summary."""
    from netdojo.reports.outputs import REPORT, write_report
    from netdojo.reports.runs import load_runs

    runs = load_runs([run_dir, *(compare or [])])
    target = output or run_dir / REPORT
    print(write_report(runs, target, skipped=_not_compared), end="")
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
    from netdojo.reports.runs import load_runs
    from netdojo.servers.mcp_server import evaluation_tools

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


def _not_compared(reason: str) -> None:
    err.print(f"[yellow]no paired comparison:[/] {reason}")


def _cell(rate: Rate) -> str:
    return f"{100 * rate.value:.0f} ({100 * rate.ci_low:.0f}-{100 * rate.ci_high:.0f})"


def leaderboard(
    run_dirs: RunDirs,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Merge runs per agent into a ranked table: correct-and-safe score, then effort."""
    from netdojo.reports.leaderboard import leaderboard as build
    from netdojo.reports.runs import load_runs

    board = build(load_runs(list(dict.fromkeys(run_dirs))))
    if as_json:
        print(json.dumps(board.model_dump(mode="json"), indent=1))
        return
    table = Table(
        title="netdojo leaderboard",
        caption=f"{board.composite}. f.alarm: % of healthy controls changed or claimed faulty; "
        "loc F1, cause F1: mean localisation and root-cause F1 of scored diagnoses; calls, secs: "
        "mean tool calls and agent seconds; inst., eps.: distinct instances and counted "
        "episodes; out: episodes left out (not the agent's); -: none to measure.",
        box=box.SIMPLE_HEAD,
        padding=(0, 0),
    )
    widest = max((len(e.agent) for e in board.entries), default=0)
    for name in LEADERBOARD_COLUMNS:  # on a narrow terminal the figures shrink, never the names
        table.add_column(name, no_wrap=True, min_width=widest if name == "agent" else None)
    for e in board.entries:
        table.add_row(
            str(e.rank), e.agent, _cell(e.score), f"{100 * e.correct.value:.0f}",
            f"{100 * e.safe.value:.0f}", _optional(e.false_alarms, 100, ".0f"),
            _optional(e.localisation_f1, 1, ".2f"), _optional(e.root_cause_f1, 1, ".2f"),
            f"{e.tool_calls.value:.1f}", f"{e.wall_s.value:.1f}",
            str(e.instances), str(e.episodes), str(e.excluded),
        )  # fmt: skip
    console.print(table)


def _optional(rate: Rate | None, scale: float, form: str) -> str:
    return "-" if rate is None else format(scale * rate.value, form)


def merge(
    shard_dirs: Annotated[
        list[Path],
        typer.Argument(
            exists=True,
            file_okay=False,
            help="The folders of every shard, each written by `netdojo run --shard I/N`.",
        ),
    ],
    out: Annotated[
        Path, typer.Option(file_okay=False, help="The folder to write the merged run to.")
    ],
) -> None:
    """Join the shards of one assessment, run apart, into one run folder: results.json with
    the summary over every episode, trajectories/, summary.md and report.html, read by every
    results command like an unsharded run."""
    from netdojo.reports.merge import merge_runs
    from netdojo.reports.outputs import write_run_reports
    from netdojo.reports.runs import load_runs, save_run

    merged = merge_runs(load_runs(shard_dirs), out)
    save_run(merged)
    written = write_run_reports(out)
    summary, solved = merged.result.summary, merged.result.summary.solved
    err.print(
        f"merged {len(shard_dirs)} shards: {summary.episodes} episodes, {summary.counted} "
        f"counted, solved {solved.value:.0%} (95% CI {solved.ci_low:.0%}-{solved.ci_high:.0%})"
    )
    console.print(f"results: {out / 'results.json'}, {', '.join(map(str, written))}")
