"""The files made of runs: a self-contained HTML report and its Markdown summary."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from netdojo.reports.compare import RunComparison, compare_runs
from netdojo.reports.markdown import summary_markdown
from netdojo.reports.redact import environment_secrets, scrub_text
from netdojo.reports.report_page import render_report
from netdojo.reports.runs import Run, load_run

REPORT = "report.html"
SUMMARY = "summary.md"


def comparisons(runs: list[Run], skipped: Callable[[str], None]) -> list[RunComparison]:
    """The first run compared pair by pair with each other; ``skipped`` hears why a pair
    could not be compared."""
    found = []
    for other in runs[1:]:
        try:
            found.append(compare_runs(runs[0], other))
        except ValueError as exc:
            skipped(str(exc))
    return found


def write_report(
    runs: list[Run],
    html_path: Path,
    markdown_path: Path | None = None,
    skipped: Callable[[str], None] = lambda _: None,
) -> str:
    """Write the HTML report (and the Markdown summary); return the Markdown."""
    compared = comparisons(runs, skipped)
    html_path.parent.mkdir(parents=True, exist_ok=True)
    html_path.write_text(render_report(runs, compared))
    markdown = scrub_text(summary_markdown(runs, compared), environment_secrets())
    if markdown_path is not None:
        markdown_path.write_text(markdown)
    return markdown


def write_run_reports(out: Path) -> list[Path]:
    """After `netdojo run`: the run's `summary.md` and `report.html`, next to its results."""
    write_report([load_run(out)], out / REPORT, out / SUMMARY)
    return [out / SUMMARY, out / REPORT]
