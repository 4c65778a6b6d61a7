"""The report's figures, drawn with matplotlib into standalone SVG documents.

Figures are built with the object-oriented API (`Figure`, no pyplot), so nothing touches a
display or global state; each is returned as SVG text ready to inline. Every rate is drawn
with its 95% interval.
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from netdojo.reports.records import Rate, Summary
from netdojo.reports.runs import Run
from netdojo.reports.summary import counted

OUTCOME_COLOURS: dict[str, str] = {
    "solved": "#2e7d32",
    "partial": "#9ccc65",
    "unsolved": "#9e9e9e",
    "unsafe": "#c62828",
    "agent_error": "#ef6c00",
    "timeout": "#6a1b9a",
    "infra_error": "#37474f",
    "judge_error": "#546e7a",
    "environment_invalid": "#8d6e63",
}
RUN_COLOURS = ("#1565c0", "#e65100", "#2e7d32", "#6a1b9a", "#00838f", "#ad1457", "#5d4037")


@dataclass(frozen=True)
class Series:
    """One run as drawn: its label in legends and its summary."""

    label: str
    run: Run
    summary: Summary


def series_of(runs: Sequence[Run]) -> list[Series]:
    """Each run labelled by its agent; repeated agents are numbered."""
    seen: dict[str, int] = {}
    series = []
    for run in runs:
        seen[run.agent] = seen.get(run.agent, 0) + 1
        label = run.agent if seen[run.agent] == 1 else f"{run.agent} #{seen[run.agent]}"
        series.append(Series(label=label, run=run, summary=run.summary))
    return series


@dataclass(frozen=True)
class Plot:
    """One figure: an id for anchors, a caption, and the SVG document."""

    key: str
    title: str
    caption: str
    svg: str


def colour(index: int) -> str:
    return RUN_COLOURS[index % len(RUN_COLOURS)]


def _svg(figure: Figure) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def _figure(width: float, height: float) -> Figure:
    return Figure(figsize=(width, height), layout="constrained")


def _legend_below(figure: Figure, axes: Axes, columns: int = 4) -> None:
    figure.legend(
        *axes.get_legend_handles_labels(), loc="outside lower center", ncols=columns, fontsize=7
    )


def _errors(rates: Sequence[Rate]) -> list[list[float]]:
    return [
        [max(0.0, r.value - r.ci_low) for r in rates],
        [max(0.0, r.ci_high - r.value) for r in rates],
    ]


def _grouped_bars(
    axes: Axes, groups: list[str], series: list[tuple[str, list[Rate | None]]], title: str
) -> None:
    """Bars per group, one per series, with interval whiskers; missing cells are left empty."""
    width = 0.8 / max(1, len(series))
    for i, (label, rates) in enumerate(series):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        present = [(x, r) for x, r in zip(xs, rates, strict=True) if r is not None]
        if not present:
            continue
        axes.bar(
            [x for x, _ in present],
            [r.value for _, r in present],
            width=width * 0.9,
            color=colour(i),
            label=label,
            yerr=_errors([r for _, r in present]),
            capsize=3,
            error_kw={"elinewidth": 1, "ecolor": "#212121"},
        )
    axes.set_xticks(range(len(groups)), [_short(g) for g in groups], rotation=20, ha="right")
    axes.set_ylim(0, 1.05)
    axes.set_title(title)
    axes.yaxis.set_major_formatter("{x:.0%}")
    axes.grid(axis="y", alpha=0.3)


def _short(label: str, limit: int = 18) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"


def rates_by(series: Sequence[Series], dimension: str) -> Plot:
    """Correctness and safety per family (or level), every run side by side."""
    groups = sorted({g for x in series for g in x.summary.breakdown.get(dimension, {})})
    figure = _figure(max(6.0, 1.1 * len(groups) + 3.5), 3.4)
    left, right = figure.subplots(1, 2, sharey=True)
    for axes, measure in ((left, "correct"), (right, "safe")):
        bars: list[tuple[str, list[Rate | None]]] = []
        for x in series:
            table = x.summary.breakdown.get(dimension, {})
            bars.append(
                (x.label, [getattr(table[g], measure) if g in table else None for g in groups])
            )
        _grouped_bars(axes, groups, bars, f"{measure} by {dimension}")
    if len(series) > 1:
        _legend_below(figure, left)
    return Plot(
        key=f"by-{dimension}",
        title=f"Correctness and safety by {dimension}",
        caption=f"Share of counted episodes per {dimension}; whiskers are Wilson 95% intervals.",
        svg=_svg(figure),
    )


def safety_vs_correctness(series: Sequence[Series]) -> Plot:
    figure = _figure(4.8, 4.4)
    axes = figure.subplots()
    for i, x in enumerate(series):
        s = x.summary
        axes.errorbar(
            [s.correct.value],
            [s.safe.value],
            xerr=_errors([s.correct]),
            yerr=_errors([s.safe]),
            fmt="o",
            color=colour(i),
            capsize=3,
            label=f"{x.label} (n={s.counted})",
        )
    axes.set_xlim(-0.05, 1.05)
    axes.set_ylim(-0.05, 1.05)
    axes.set_xlabel("correct")
    axes.set_ylabel("safe")
    axes.xaxis.set_major_formatter("{x:.0%}")
    axes.yaxis.set_major_formatter("{x:.0%}")
    axes.grid(alpha=0.3)
    _legend_below(figure, axes, columns=2)
    return Plot(
        key="safety-vs-correctness",
        title="Safety against correctness",
        caption="One point per agent; whiskers are Wilson 95% intervals in each direction.",
        svg=_svg(figure),
    )


def effort(series: Sequence[Series]) -> Plot:
    """Distributions of tool calls and agent seconds per counted episode, per run."""
    figure = _figure(max(6.0, 1.4 * len(series) + 4.0), 3.0)
    calls_axes, time_axes = figure.subplots(1, 2)
    verdicts = [[r.verdict for r in counted(x.run.result.episodes) if r.verdict] for x in series]
    positions = list(range(1, len(series) + 1))
    for axes, values, title in (
        (calls_axes, [[v.effort.tool_calls for v in vs] for vs in verdicts], "tool calls"),
        (time_axes, [[v.effort.wall_s for v in vs] for vs in verdicts], "agent seconds"),
    ):
        filled = [(p, v) for p, v in zip(positions, values, strict=True) if v]
        if filled:
            box = axes.boxplot(
                [v for _, v in filled],
                positions=[p for p, _ in filled],
                widths=0.5,
                patch_artist=True,
                medianprops={"color": "#212121"},
            )
            for patch, (p, _) in zip(box["boxes"], filled, strict=True):
                patch.set_facecolor(colour(p - 1))
                patch.set_alpha(0.45)
            for p, v in filled:
                axes.scatter([p] * len(v), v, s=10, color=colour(p - 1), zorder=3)
        axes.set_xticks(positions, [_short(x.label) for x in series], rotation=20, ha="right")
        axes.set_title(title)
        axes.set_ylim(bottom=0)
        axes.grid(axis="y", alpha=0.3)
    return Plot(
        key="effort",
        title="Effort",
        caption="Per counted episode: boxes span the quartiles, dots are single episodes.",
        svg=_svg(figure),
    )


def outcome_mix(series: Sequence[Series]) -> Plot:
    """Every episode's outcome, errored ones included, as stacked shares per run."""
    figure = _figure(7.0, 0.5 * len(series) + 1.4)
    axes = figure.subplots()
    labelled: set[str] = set()
    for row, x in enumerate(series):
        tally = Counter(r.outcome for r in x.run.result.episodes)
        total, start = sum(tally.values()) or 1, 0.0
        for outcome, shade in OUTCOME_COLOURS.items():
            if not tally[outcome]:
                continue
            share = tally[outcome] / total
            label = None if outcome in labelled else outcome
            labelled.add(outcome)
            axes.barh(row, share, left=start, color=shade, height=0.6, label=label)
            axes.text(
                start + share / 2,
                row,
                str(tally[outcome]),
                ha="center",
                va="center",
                color="white",
                fontsize=8,
            )
            start += share
    axes.set_yticks(range(len(series)), [_short(x.label, 24) for x in series])
    axes.invert_yaxis()
    axes.set_xlim(0, 1)
    axes.xaxis.set_major_formatter("{x:.0%}")
    _legend_below(figure, axes)
    return Plot(
        key="outcomes",
        title="Outcome mix",
        caption="Every episode, counted or not; numbers are episode counts.",
        svg=_svg(figure),
    )


def trials(series: Sequence[Series]) -> Plot | None:
    """pass@k and pass^k against k, for runs with several trials per instance."""
    if all(x.summary.trials is None for x in series):
        return None
    figure = _figure(6.5, 3.2)
    at_axes, hat_axes = figure.subplots(1, 2, sharey=True)
    for i, x in enumerate(series):
        stats = x.summary.trials
        if stats is None:
            continue
        for axes, table in ((at_axes, stats.pass_at_k), (hat_axes, stats.pass_hat_k)):
            ks = sorted(table, key=int)
            axes.errorbar(
                [int(k) for k in ks],
                [table[k].value for k in ks],
                yerr=_errors([table[k] for k in ks]),
                marker="o",
                capsize=3,
                color=colour(i),
                label=x.label,
            )
    for axes, title in ((at_axes, "pass@k"), (hat_axes, "pass^k")):
        axes.set_title(title)
        axes.set_xlabel("k")
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.set_ylim(0, 1.05)
        axes.yaxis.set_major_formatter("{x:.0%}")
        axes.grid(alpha=0.3)
    _legend_below(figure, at_axes)
    return Plot(
        key="trials",
        title="Several trials per instance",
        caption="pass@k: at least one of k trials solves; pass^k: all k do. Bootstrap 95% "
        "intervals over instances.",
        svg=_svg(figure),
    )


def all_plots(series: Sequence[Series]) -> list[Plot]:
    with rc_context(
        {
            "svg.fonttype": "none",
            "svg.hashsalt": "netdojo",
            "font.size": 9,
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    ):
        plots = [
            rates_by(series, "family"),
            rates_by(series, "level"),
            safety_vs_correctness(series),
            effort(series),
            outcome_mix(series),
        ]
        extra = trials(series)
    return plots + ([extra] if extra else [])
