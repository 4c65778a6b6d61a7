"""The Markdown summary of one or more runs, for terminals and CI logs."""

from __future__ import annotations

from collections.abc import Sequence

from netdojo.reports.compare import RunComparison
from netdojo.reports.records import NOT_THE_AGENTS, Rate, Summary
from netdojo.reports.runs import Run


def pct(rate: Rate) -> str:
    return f"{rate.value:.1%} ({rate.ci_low:.1%} to {rate.ci_high:.1%})"


def mean(rate: Rate) -> str:
    return f"{rate.value:.1f} ({rate.ci_low:.1f} to {rate.ci_high:.1f})"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def _headline(summary: Summary) -> list[str]:
    rows = [
        [name, f"{rate.value:.1%}", f"{rate.ci_low:.1%} to {rate.ci_high:.1%}", str(rate.n)]
        for name, rate in (
            ("solved", summary.solved),
            ("correct", summary.correct),
            ("safe", summary.safe),
        )
    ]
    rows += [
        [name, f"{rate.value:.1f}", f"{rate.ci_low:.1f} to {rate.ci_high:.1f}", str(rate.n)]
        for name, rate in (
            ("tool calls (mean)", summary.tool_calls),
            ("agent seconds (mean)", summary.wall_s),
        )
    ]
    if summary.false_alarms is not None:
        rate = summary.false_alarms
        rows.append(["false alarms", f"{rate.value:.1%}", _interval(rate), str(rate.n)])
    rows += [
        [name, f"{r.value:.2f}", f"{r.ci_low:.2f} to {r.ci_high:.2f}", str(r.n)]
        for name, r in score_rows(summary)
    ]
    return _table(["measure", "value", "95% CI", "n"], rows)


def _interval(rate: Rate) -> str:
    return f"{rate.ci_low:.1%} to {rate.ci_high:.1%}"


SCORE_PARTS = ("precision", "recall", "f1")


def score_rows(summary: Summary) -> list[tuple[str, Rate]]:
    """Precision, recall and F1 of localisation and root cause, when diagnoses were scored."""
    rows: list[tuple[str, Rate]] = []
    for name, scored in (
        ("localisation", summary.localisation),
        ("root cause", summary.root_cause),
    ):
        if scored is not None:
            rows += [
                (f"{name} {part}", getattr(scored, part)) for part in ("precision", "recall", "f1")
            ]
    return rows


def _breakdowns(summary: Summary) -> list[str]:
    lines: list[str] = []
    for dimension, groups in summary.breakdown.items():
        lines += ["", f"### By {dimension}", ""]
        lines += _table(
            [dimension, "n", "correct", "safe", "solved"],
            [
                [name, str(g.counted), pct(g.correct), pct(g.safe), pct(g.solved)]
                for name, g in groups.items()
            ],
        )
    return lines


def _trials(summary: Summary) -> list[str]:
    if summary.trials is None:
        return []
    stats = summary.trials
    rows = [
        [k, pct(stats.pass_at_k[k]), pct(stats.pass_hat_k[k]), str(stats.pass_at_k[k].n)]
        for k in sorted(stats.pass_at_k, key=int)
    ]
    return [
        "",
        f"### Trials ({stats.trials} per instance, {stats.instances} instances)",
        "",
        *_table(["k", "pass@k", "pass^k", "instances"], rows),
    ]


def _excluded(run: Run) -> list[str]:
    left_out = [r for r in run.result.episodes if r.outcome in NOT_THE_AGENTS]
    if not left_out:
        return []
    return [
        "",
        "### Left out of every rate (not the agent's doing)",
        "",
        *_table(
            ["episode", "outcome", "attempts", "error"],
            [
                [r.episode_id, r.outcome, str(r.attempts), (r.error or "").replace("|", "/")]
                for r in left_out
            ],
        ),
    ]


def spent(summary: Summary) -> str:
    """The run's agent turns and tokens in and out, as totals; "?" for what was not reported."""
    figures = (summary.turns, summary.tokens_in, summary.tokens_out)
    turns, tokens_in, tokens_out = ("?" if v is None else f"{v:,}" for v in figures)
    return f"{turns} turns, {tokens_in} tokens in, {tokens_out} tokens out"


def _spent(summary: Summary) -> str:
    if summary.turns is None and summary.tokens_in is None and summary.tokens_out is None:
        return ""
    return f" Agent effort in total: {spent(summary)}."


def run_markdown(run: Run) -> list[str]:
    summary = run.summary
    excluded = ", ".join(f"{k} {v}" for k, v in summary.excluded.items()) or "none"
    outcomes = ", ".join(f"{k} {v}" for k, v in sorted(summary.outcomes.items()))
    return [
        f"## {run.result.participant}",
        "",
        f"{summary.counted} of {summary.episodes} episodes counted (outcomes: {outcomes}); "
        f"left out: {excluded}.{_spent(summary)}",
        "",
        *_headline(summary),
        *_breakdowns(summary),
        *_trials(summary),
        *_excluded(run),
    ]


def comparison_markdown(comparison: RunComparison) -> list[str]:
    rows = [
        [
            m.measure,
            pct(m.a),
            pct(m.b),
            f"{m.paired.difference.value:+.1%} ({m.paired.difference.ci_low:+.1%} to "
            f"{m.paired.difference.ci_high:+.1%})",
            f"{m.paired.a_only}/{m.paired.b_only}",
            f"{m.paired.mcnemar_p:.3g}",
            "yes" if m.paired.intervals_overlap else "no",
        ]
        for m in comparison.measures
    ]
    overlapping = sum(g.overlap for g in comparison.groups)
    return [
        f"## Paired: A = {comparison.a}, B = {comparison.b}",
        "",
        f"{comparison.pairs} pairs on {comparison.instances} shared instances "
        f"(unpaired: {comparison.only_a} in A, {comparison.only_b} in B).",
        "",
        *_table(
            [
                "measure",
                "A",
                "B",
                "A - B (paired bootstrap)",
                "A only/B only",
                "McNemar p",
                "95% CIs overlap",
            ],
            rows,
        ),
        "",
        f"Solve-rate intervals overlap in {overlapping} of {len(comparison.groups)} groups "
        f"({comparison.overlap_share:.0%}: overall, per family, per level).",
    ]


def summary_markdown(runs: Sequence[Run], comparisons: Sequence[RunComparison] = ()) -> str:
    lines = ["# netdojo assessment" + (f"s: {len(runs)} runs" if len(runs) > 1 else ""), ""]
    for run in runs:
        lines += [*run_markdown(run), ""]
    for comparison in comparisons:
        lines += [*comparison_markdown(comparison), ""]
    return "\n".join(lines).rstrip() + "\n"
