"""The report's sections over whole runs: provenance, headline rates, figures, breakdowns and
paired comparisons."""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence

from netdojo.reports.compare import RunComparison
from netdojo.reports.markdown import mean, score_rows, spent
from netdojo.reports.plots import Plot, Series
from netdojo.reports.records import NOT_THE_AGENTS
from netdojo.reports.report_markup import Text, anchor, badge, rate_cells, table, td


def runs_section(series: Sequence[Series], text: Text) -> str:
    """Provenance and config, one column per run."""
    fields: list[tuple[str, list[str]]] = [
        ("participant", []),
        ("directory", []),
        ("episodes counted", []),
        ("versions", []),
        ("device image", []),
        ("host", []),
        ("families and levels", []),
        ("schedule", []),
        ("budgets", []),
        ("instances", []),
    ]
    for x in series:
        p, config = x.run.result.provenance, x.run.result.config
        instances = len(p.instances) or len({r.scenario_id for r in x.run.result.episodes})
        merged = f"; merged from {len(p.shards)} shards" if p.shards else ""
        sharded = config.num_shards > 1
        shard = f"; shard {config.shard_index} of {config.num_shards}" if sharded else ""
        values = [
            x.run.result.participant,
            str(x.run.path),
            f"{x.summary.counted} of {x.summary.episodes}",
            f"netdojo {p.netdojo}, Kathará {p.kathara}, FRR {p.frr or 'not recorded'}, "
            f"MCP {p.mcp}, Python {p.python}, Docker {p.docker or 'not recorded'}",
            p.device_image or "not recorded",
            f"{p.host}; {p.cpus or '?'} CPUs; {p.memory_mib or '?'} MiB{merged}",
            f"{', '.join(config.families)}; levels {', '.join(map(str, config.levels))}",
            f"assessment seed {config.seed}; trials {config.trials}; mode {config.mode}; "
            f"concurrency {config.concurrency}{shard}",
            f"{config.max_tool_calls} tool calls, {config.time_budget_s:g} s per episode",
            str(instances),
        ]
        for (_, column), value in zip(fields, values, strict=True):
            column.append(td(text(value)))
    rows = [[f"<th>{name}</th>", *cells] for name, cells in fields]
    return "<h2 id='runs'>Runs</h2>" + table(["", *(text(x.label) for x in series)], rows)


def headline_section(series: Sequence[Series], text: Text) -> str:
    rows = []
    for x in series:
        s = x.summary
        left_out = ", ".join(f"{k} {v}" for k, v in s.excluded.items()) or "none"
        rows.append(
            [
                td(html.escape(x.label)),
                *rate_cells([s.correct, s.safe, s.solved]),
                td(html.escape(mean(s.tool_calls)), numeric=True),
                td(html.escape(mean(s.wall_s)), numeric=True),
                td(html.escape(spent(s))),
                td(str(s.counted), numeric=True),
                td(html.escape(left_out)),
            ]
        )
    header = [
        "run",
        "correct",
        "safe",
        "solved",
        "tool calls",
        "agent s",
        "turns and tokens (total)",
        "counted",
        "left out (not the agent's)",
    ]
    note = (
        "<p class='muted'>Rates are over counted episodes with Wilson 95% intervals; means "
        "have percentile-bootstrap 95% intervals. Episodes that failed for reasons not the "
        "agent's (infra_error, judge_error, environment_invalid) are left out of every rate.</p>"
    )
    return "<h2 id='headline'>Headline</h2>" + note + table(header, rows) + _left_out(series, text)


def diagnosis_section(series: Sequence[Series]) -> str:
    """The false-alarm rate over healthy controls and the diagnosis scores, for runs that
    have either; nothing otherwise."""
    rows = []
    for x in series:
        s = x.summary
        alarms = s.false_alarms
        cells = [td(html.escape(x.label)), td(str(s.healthy_controls), numeric=True)]
        cells += rate_cells([alarms]) if alarms is not None else [td("")]
        scored = score_rows(s)
        cells += [td(f"{r.value:.2f} ({r.ci_low:.2f} to {r.ci_high:.2f})", numeric=True)
                  for name, r in scored if name.endswith("f1")]  # fmt: skip
        if alarms is not None or scored:
            rows.append(cells + [td("")] * (5 - len(cells)))
    if not rows:
        return ""
    header = ["run", "healthy controls", "false alarms", "localisation F1", "root-cause F1"]
    note = (
        "<p class='muted'>A false alarm is a healthy control (nothing wrong) where the agent "
        "changed state or claimed a fault; the F1 scores are means over the episodes whose "
        "structured diagnosis was scored (devices named against the devices at fault; fault "
        "classes against the classes of the faults).</p>"
    )
    return "<h2 id='diagnosis'>Healthy controls and diagnosis</h2>" + note + table(header, rows)


def _left_out(series: Sequence[Series], text: Text) -> str:
    """The episodes no rate counts, each with what went wrong."""
    rows = [
        [
            td(text(x.label)),
            td(f'<a href="#{anchor(i, r)}">{text(r.episode_id)}</a>'),
            td(badge(r.outcome)),
            td(str(r.attempts), numeric=True),
            td(text(r.error or "")),
        ]
        for i, x in enumerate(series)
        for r in x.run.result.episodes
        if r.outcome in NOT_THE_AGENTS
    ]
    if not rows:
        return ""
    header = ["run", "episode", "outcome", "attempts", "error"]
    return "<h3>Left out of every rate</h3>" + table(header, rows)


def figures_section(plots: Sequence[Plot]) -> str:
    parts = ["<h2 id='figures'>Figures</h2>"]
    for plot in plots:
        data = base64.b64encode(plot.svg.encode()).decode()
        parts.append(
            f'<figure id="fig-{plot.key}"><img class="plot" alt="{html.escape(plot.title)}" '
            f'src="data:image/svg+xml;base64,{data}"><figcaption><b>{html.escape(plot.title)}'
            f"</b>. {html.escape(plot.caption)}</figcaption></figure>"
        )
    return "\n".join(parts)


def breakdown_section(series: Sequence[Series]) -> str:
    parts = ["<h2 id='breakdowns'>Breakdowns</h2>"]
    for x in series:
        parts.append(f"<h3>{html.escape(x.label)}</h3>")
        for dimension, groups in x.summary.breakdown.items():
            rows = [
                [
                    td(html.escape(name)),
                    td(str(g.counted), numeric=True),
                    *rate_cells([g.correct, g.safe, g.solved]),
                ]
                for name, g in groups.items()
            ]
            parts.append(table([dimension, "n", "correct", "safe", "solved"], rows))
        trials = x.summary.trials
        if trials is not None:
            rows = [
                [td(k), *rate_cells([trials.pass_at_k[k], trials.pass_hat_k[k]])]
                for k in sorted(trials.pass_at_k, key=int)
            ]
            parts.append(
                f"<p>{trials.trials} trials per instance over {trials.instances} instances:</p>"
                + table(["k", "pass@k", "pass^k"], rows)
            )
    return "\n".join(parts)


def comparison_section(comparisons: Sequence[RunComparison], text: Text) -> str:
    if not comparisons:
        return ""
    parts = [
        "<h2 id='paired'>Paired comparison</h2>",
        "<p class='muted'>Episodes pair by instance and trial. The paired bootstrap interval "
        "of A&minus;B and the exact McNemar test use the pairing; overlapping separate "
        "intervals are a weaker test, shown for comparison with other benchmarks.</p>",
    ]
    for c in comparisons:
        rows = []
        for m in c.measures:
            d = m.paired.difference
            rows.append(
                [
                    td(m.measure),
                    *rate_cells([m.a, m.b]),
                    td(f"{d.value:+.1%} ({d.ci_low:+.1%} to {d.ci_high:+.1%})", numeric=True),
                    td(f"{m.paired.a_only} / {m.paired.b_only}", numeric=True),
                    td(f"{m.paired.mcnemar_p:.3g}", numeric=True),
                    td("yes" if m.paired.intervals_overlap else "no"),
                ]
            )
        groups = [
            [td(text(g.group)), *rate_cells([g.a, g.b]), td("yes" if g.overlap else "no")]
            for g in c.groups
        ]
        parts += [
            f"<h3>A = {text(c.a)}<br>B = {text(c.b)}</h3>",
            f"<p>{c.pairs} pairs on {c.instances} shared instances; unpaired: {c.only_a} in A, "
            f"{c.only_b} in B.</p>",
            table(
                [
                    "measure",
                    "A",
                    "B",
                    "A&minus;B (paired bootstrap)",
                    "A only / B only",
                    "McNemar p",
                    "95% CIs overlap",
                ],
                rows,
            ),
            f"<p>Solve-rate intervals overlap in {sum(g.overlap for g in c.groups)} of "
            f"{len(c.groups)} groups ({c.overlap_share:.0%}).</p>",
            table(["group", "A solved", "B solved", "overlap"], groups),
        ]
    return "\n".join(parts)
