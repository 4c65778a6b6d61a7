"""Where the commands write: results on standard output, everything else on standard error
(on stdio, `netdojo mcp` keeps standard output for the protocol)."""

from __future__ import annotations

from rich.console import Console

console = Console()
err = Console(stderr=True)


def reap_leftovers() -> None:
    """Remove labs of dead netdojo processes (never a live one's) before starting new ones."""
    from netdojo.labs.reaper import reap

    report = reap()
    if not report.empty:
        err.print(f"[dim]leftovers of dead processes: {report.line()}[/]")
