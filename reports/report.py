"""The HTML report: one self-contained file that works offline.

Figures are SVG documents inlined as data URIs, the style sheet and a small check script are
inline, and a content security policy forbids loading anything from elsewhere. The check
script runs when the page has loaded: it confirms that every figure decoded to a non-empty
image and that no resource was fetched or refused, and writes the result on the body
(`data-render` is ``ok`` or ``failed``, `data-render-status` the details as JSON), where a
headless browser can read it. A reader sees it only when something failed, in plain words.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from netdojo.reports.compare import RunComparison
from netdojo.reports.markdown import mean, pct, spent
from netdojo.reports.plots import OUTCOME_COLOURS, Plot, Series, all_plots
from netdojo.reports.records import NOT_THE_AGENTS, EpisodeRecord, Rate
from netdojo.reports.redact import environment_secrets, scrub_text
from netdojo.reports.runs import Run
from netdojo.reports.summary import is_correct, is_safe
from netdojo.tools.trajectory import Step, Trajectory

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#212121;
background:#fafafa}
main{max-width:1180px;margin:0 auto;padding:16px 24px 64px}
h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;margin:6px 0 12px;background:#fff}
td,th{border:1px solid #e0e0e0;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f1f1f1}td.num{text-align:right;font-variant-numeric:tabular-nums}
figure{background:#fff;border:1px solid #e0e0e0;margin:12px 0;padding:8px;display:inline-block;
vertical-align:top}
figure img{display:block;max-width:100%;height:auto}figcaption{font-size:12px;color:#555}
.badge{display:inline-block;padding:0 6px;border-radius:3px;color:#fff;font-size:12px}
pre{background:#f5f5f5;border:1px solid #e0e0e0;padding:6px 8px;white-space:pre-wrap;
word-break:break-word;max-height:420px;overflow:auto;font-size:12px;margin:4px 0}
section.episode{background:#fff;border:1px solid #e0e0e0;padding:8px 16px;margin:16px 0}
ol.steps{padding-left:28px}ol.steps li{margin:6px 0}
.call{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
.flag{font-size:11px;border:1px solid #999;border-radius:3px;padding:0 4px;margin-left:4px}
.changed{border-color:#ef6c00;color:#ef6c00}.refused{border-color:#c62828;color:#c62828}
.pass{color:#2e7d32}.fail{color:#c62828}.muted{color:#757575}
nav a{margin-right:12px}
"""

CHECK_SCRIPT = """
window.__problems = [];
window.addEventListener('error', function (e) {
  window.__problems.push('error: ' + (e.message || (e.target && (e.target.src || e.target.href))));
}, true);
document.addEventListener('securitypolicyviolation', function (e) {
  window.__problems.push('blocked: ' + e.blockedURI);
});
window.addEventListener('load', function () {
  var plots = Array.prototype.slice.call(document.querySelectorAll('img.plot'));
  var failed = plots.filter(function (img) {
    return !(img.complete && img.naturalWidth > 0 && img.naturalHeight > 0);
  }).map(function (img) { return img.alt; });
  var fetched = performance.getEntriesByType('resource').map(function (r) { return r.name; })
    .filter(function (name) { return name.indexOf('data:') !== 0; });
  var status = {plots: plots.length, rendered: plots.length - failed.length, failed: failed,
                fetched: fetched, problems: window.__problems};
  var ok = plots.length > 0 && !failed.length && !fetched.length && !window.__problems.length;
  document.body.setAttribute('data-render-status', JSON.stringify(status));
  document.body.setAttribute('data-render', ok ? 'ok' : 'failed');
  if (!ok) {
    var note = document.getElementById('render-problem');
    var missing = failed.length ? ' (missing: ' + failed.join(', ') + ')' : '';
    var reported = fetched.concat(window.__problems).map(function (r) { return r.slice(0, 80); });
    note.textContent = 'This page did not render fully: ' + status.rendered + ' of ' +
      status.plots + ' figures shown' + missing +
      (reported.length ? '; the browser reported: ' + reported.join('; ') : '') + '.';
    note.hidden = false;
  }
});
"""

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'"


class _Text:
    """Escapes for HTML after removing secrets."""

    def __init__(self) -> None:
        self.secrets = environment_secrets()

    def __call__(self, value: Any) -> str:
        return html.escape(scrub_text(str(value), self.secrets))


def series_of(runs: Sequence[Run]) -> list[Series]:
    """Each run labelled by its agent; repeated agents are numbered."""
    seen: dict[str, int] = {}
    series = []
    for run in runs:
        seen[run.agent] = seen.get(run.agent, 0) + 1
        label = run.agent if seen[run.agent] == 1 else f"{run.agent} #{seen[run.agent]}"
        series.append(Series(label=label, run=run, summary=run.summary))
    return series


def anchor(index: int, record: EpisodeRecord) -> str:
    return f"ep-{index}-{record.episode_id}"


def _table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _td(text: str, numeric: bool = False) -> str:
    return f'<td class="num">{text}</td>' if numeric else f"<td>{text}</td>"


def _badge(outcome: str) -> str:
    shade = OUTCOME_COLOURS.get(outcome, "#616161")
    return f'<span class="badge" style="background:{shade}">{html.escape(outcome)}</span>'


def _yes(flag: bool) -> str:
    return '<span class="pass">yes</span>' if flag else '<span class="fail">no</span>'


def _rate_cells(rates: Iterable[Rate]) -> list[str]:
    return [_td(html.escape(pct(r)), numeric=True) for r in rates]


def _runs_section(series: Sequence[Series], text: _Text) -> str:
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
        values = [
            x.run.result.participant,
            str(x.run.path),
            f"{x.summary.counted} of {x.summary.episodes}",
            f"netdojo {p.netdojo}, Kathará {p.kathara}, FRR {p.frr or 'not recorded'}, "
            f"MCP {p.mcp}, Python {p.python}, Docker {p.docker or 'not recorded'}",
            p.device_image or "not recorded",
            f"{p.host}; {p.cpus or '?'} CPUs; {p.memory_mib or '?'} MiB",
            f"{', '.join(config.families)}; levels {', '.join(map(str, config.levels))}",
            f"assessment seed {config.seed}; trials {config.trials}; mode {config.mode}; "
            f"concurrency {config.concurrency}",
            f"{config.max_tool_calls} tool calls, {config.time_budget_s:g} s per episode",
            str(instances),
        ]
        for (_, column), value in zip(fields, values, strict=True):
            column.append(_td(text(value)))
    rows = [[f"<th>{name}</th>", *cells] for name, cells in fields]
    return "<h2 id='runs'>Runs</h2>" + _table(["", *(text(x.label) for x in series)], rows)


def _headline_section(series: Sequence[Series], text: _Text) -> str:
    rows = []
    for x in series:
        s = x.summary
        left_out = ", ".join(f"{k} {v}" for k, v in s.excluded.items()) or "none"
        rows.append(
            [
                _td(html.escape(x.label)),
                *_rate_cells([s.correct, s.safe, s.solved]),
                _td(html.escape(mean(s.tool_calls)), numeric=True),
                _td(html.escape(mean(s.wall_s)), numeric=True),
                _td(html.escape(spent(s))),
                _td(str(s.counted), numeric=True),
                _td(html.escape(left_out)),
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
    return "<h2 id='headline'>Headline</h2>" + note + _table(header, rows) + _left_out(series, text)


def _left_out(series: Sequence[Series], text: _Text) -> str:
    """The episodes no rate counts, each with what went wrong."""
    rows = [
        [
            _td(text(x.label)),
            _td(f'<a href="#{anchor(i, r)}">{text(r.episode_id)}</a>'),
            _td(_badge(r.outcome)),
            _td(str(r.attempts), numeric=True),
            _td(text(r.error or "")),
        ]
        for i, x in enumerate(series)
        for r in x.run.result.episodes
        if r.outcome in NOT_THE_AGENTS
    ]
    if not rows:
        return ""
    header = ["run", "episode", "outcome", "attempts", "error"]
    return "<h3>Left out of every rate</h3>" + _table(header, rows)


def _figures_section(plots: Sequence[Plot]) -> str:
    parts = ["<h2 id='figures'>Figures</h2>"]
    for plot in plots:
        data = base64.b64encode(plot.svg.encode()).decode()
        parts.append(
            f'<figure id="fig-{plot.key}"><img class="plot" alt="{html.escape(plot.title)}" '
            f'src="data:image/svg+xml;base64,{data}"><figcaption><b>{html.escape(plot.title)}'
            f"</b>. {html.escape(plot.caption)}</figcaption></figure>"
        )
    return "\n".join(parts)


def _breakdown_section(series: Sequence[Series]) -> str:
    parts = ["<h2 id='breakdowns'>Breakdowns</h2>"]
    for x in series:
        parts.append(f"<h3>{html.escape(x.label)}</h3>")
        for dimension, groups in x.summary.breakdown.items():
            rows = [
                [
                    _td(html.escape(name)),
                    _td(str(g.counted), numeric=True),
                    *_rate_cells([g.correct, g.safe, g.solved]),
                ]
                for name, g in groups.items()
            ]
            parts.append(_table([dimension, "n", "correct", "safe", "solved"], rows))
        trials = x.summary.trials
        if trials is not None:
            rows = [
                [_td(k), *_rate_cells([trials.pass_at_k[k], trials.pass_hat_k[k]])]
                for k in sorted(trials.pass_at_k, key=int)
            ]
            parts.append(
                f"<p>{trials.trials} trials per instance over {trials.instances} instances:</p>"
                + _table(["k", "pass@k", "pass^k"], rows)
            )
    return "\n".join(parts)


def _comparison_section(comparisons: Sequence[RunComparison], text: _Text) -> str:
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
                    _td(m.measure),
                    *_rate_cells([m.a, m.b]),
                    _td(f"{d.value:+.1%} ({d.ci_low:+.1%} to {d.ci_high:+.1%})", numeric=True),
                    _td(f"{m.paired.a_only} / {m.paired.b_only}", numeric=True),
                    _td(f"{m.paired.mcnemar_p:.3g}", numeric=True),
                    _td("yes" if m.paired.intervals_overlap else "no"),
                ]
            )
        groups = [
            [_td(text(g.group)), *_rate_cells([g.a, g.b]), _td("yes" if g.overlap else "no")]
            for g in c.groups
        ]
        parts += [
            f"<h3>A = {text(c.a)}<br>B = {text(c.b)}</h3>",
            f"<p>{c.pairs} pairs on {c.instances} shared instances; unpaired: {c.only_a} in A, "
            f"{c.only_b} in B.</p>",
            _table(
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
            _table(["group", "A solved", "B solved", "overlap"], groups),
        ]
    return "\n".join(parts)


def _episodes_section(series: Sequence[Series], text: _Text) -> str:
    rows = []
    for i, x in enumerate(series):
        for r in x.run.result.episodes:
            v = r.verdict
            kept = r.outcome not in NOT_THE_AGENTS
            rows.append(
                [
                    _td(text(x.label)),
                    _td(f'<a href="#{anchor(i, r)}">{text(r.episode_id)}</a>'),
                    _td(text(r.family)),
                    _td(str(r.level), numeric=True),
                    _td(str(r.seed), numeric=True),
                    _td(str(r.trial), numeric=True),
                    _td(text(r.kind)),
                    _td(_badge(r.outcome)),
                    _td(_yes(is_correct(r)) if kept else "&ndash;"),
                    _td(_yes(is_safe(r)) if kept else "&ndash;"),
                    _td(str(v.effort.tool_calls) if v else "&ndash;", numeric=True),
                    _td(f"{v.effort.wall_s:.1f}" if v else "&ndash;", numeric=True),
                ]
            )
    header = [
        "run",
        "episode",
        "family",
        "level",
        "seed",
        "trial",
        "kind",
        "outcome",
        "correct",
        "safe",
        "tool calls",
        "agent s",
    ]
    return "<h2 id='episodes'>Episodes</h2>" + _table(header, rows)


def _result_text(step: Step) -> str:
    if step.error is not None:
        return f"error: {step.error}"
    if step.result is None:
        return step.summary
    if isinstance(step.result.get("text"), str):
        others = {k: v for k, v in step.result.items() if k not in ("text", "parsed")}
        return f"{step.result['text']}\n{json.dumps(others, ensure_ascii=False)}"
    return json.dumps(step.result, indent=1, ensure_ascii=False)


def _steps(trajectory: Trajectory, text: _Text) -> str:
    items = []
    for step in trajectory.steps:
        flags = ""
        if step.changed_state:
            flags += '<span class="flag changed">changed state</span>'
        if step.refused:
            flags += '<span class="flag refused">refused</span>'
        if not step.ok:
            flags += '<span class="flag refused">failed</span>'
        arguments = ", ".join(
            f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in step.arguments.items()
        )
        items.append(
            f'<li value="{step.index}"><span class="call">{text(step.tool)}({text(arguments)})'
            f"</span>{flags} <span class='muted'>{text(step.time)}, {step.duration_s:.2f} s"
            f"</span><br>{text(step.summary)}<details><summary>result</summary>"
            f"<pre>{text(_result_text(step))}</pre></details></li>"
        )
    return f'<ol class="steps" start="0">{"".join(items)}</ol>'


def _verdict(record: EpisodeRecord, text: _Text) -> str:
    v = record.verdict
    if v is None:
        return f"<p>No verdict: {text(record.error or record.outcome)}</p>"
    tests = []
    if v.tests is not None:
        for kind, results in (
            ("target", v.tests.targets),
            ("guard", v.tests.guards),
            ("adherence", v.tests.adherence),
        ):
            tests += [
                [
                    _td(kind),
                    _td(text(t.id)),
                    _td(text(t.description)),
                    _td(_yes(t.passed)),
                    _td(f"<pre>{text(t.evidence)}</pre>"),
                ]
                for t in results
            ]
    s = v.safety
    outages = [
        [
            _td(text(o.probe)),
            _td(text(o.description)),
            _td(f"{o.started_s:.1f}", numeric=True),
            _td(f"{o.lasted_s:.1f}", numeric=True),
            _td(f"<pre>{text(o.evidence)}</pre>"),
        ]
        for o in s.outages.outages
    ]
    effort = v.effort
    tokens = (
        f"; tokens in {effort.tokens_in}, out {effort.tokens_out}"
        if effort.tokens_in is not None or effort.tokens_out is not None
        else ""
    )
    parts = [
        f"<p>Correct: {_yes(v.correct)} (targets passing {v.targets_passed_at_start:.0%} at "
        f"the start, {v.targets_passed:.0%} at the end). Safe: {_yes(s.safe)} (guards failed: "
        f"{text(', '.join(s.guards_failed) or 'none')}; outages: {len(s.outages.outages)} over "
        f"{s.outages.samples} samples of {s.outages.flows} flows; refused changes: "
        f"{s.refused_changes}; out-of-scope changes: {s.out_of_scope_changes}).</p>",
        f"<p>Effort: {effort.tool_calls} tool calls ({effort.state_changing_calls} changing "
        f"state), {effort.wall_s:.1f} s, turns {effort.turns if effort.turns is not None else '?'}"
        f"{tokens}.</p>",
    ]
    if v.detail:
        parts.append(f"<p>The agent's answer:</p><pre>{text(v.detail)}</pre>")
    if tests:
        parts.append(_table(["test", "id", "description", "passed", "evidence"], tests))
    if outages:
        parts.append(
            "<p>Outages of protected flows seen by the monitor:</p>"
            + _table(["probe", "flow", "from s", "lasted s", "evidence"], outages)
        )
    return "\n".join(parts)


def _trajectories_section(series: Sequence[Series], text: _Text) -> str:
    parts = ["<h2 id='trajectories'>Trajectories</h2>"]
    for i, x in enumerate(series):
        for r in x.run.result.episodes:
            trajectory = x.run.trajectory(r)
            brief = trajectory.brief if trajectory and trajectory.brief else None
            parts.append(
                f'<section class="episode" id="{anchor(i, r)}"><h3>{text(r.episode_id)} '
                f"{_badge(r.outcome)}</h3><p class='muted'>{text(x.label)}: {text(r.family)} "
                f"level {r.level}, seed {r.seed}, trial {r.trial}, {text(r.kind)}; scenario "
                f"{text(r.scenario_id)}; ready {r.timings.ready_s:.1f} s, agent "
                f"{r.timings.agent_s:.1f} s, judge {r.timings.judge_s:.1f} s; attempts "
                f'{r.attempts}. <a href="#episodes">back to episodes</a></p>'
                f"<h4>Brief</h4><pre>{text(brief or 'not recorded')}</pre>"
                f"<h4>Verdict</h4>{_verdict(r, text)}"
                f"<h4>Tool calls ({len(trajectory.steps) if trajectory else 0})</h4>"
                f"{_steps(trajectory, text) if trajectory else '<p>none recorded</p>'}"
                "</section>"
            )
    return "\n".join(parts)


def render_report(runs: Sequence[Run], comparisons: Sequence[RunComparison] = ()) -> str:
    """The whole report for ``runs`` (the first is A in every comparison)."""
    if not runs:
        raise ValueError("a report needs at least one run")
    text = _Text()
    series = series_of(runs)
    plots = all_plots(series)
    title = "netdojo report: " + ", ".join(x.label for x in series)
    nav = "".join(
        f'<a href="#{key}">{name}</a>'
        for key, name in (
            ("runs", "runs"),
            ("headline", "headline"),
            ("figures", "figures"),
            ("breakdowns", "breakdowns"),
            ("paired", "paired"),
            ("episodes", "episodes"),
            ("trajectories", "trajectories"),
        )
        if key != "paired" or comparisons
    )
    generated = datetime.now(UTC).isoformat(timespec="seconds")
    body = "\n".join(
        [
            f"<h1>{text(title)}</h1>",
            f"<p class='muted'>Generated {generated}.</p>",
            "<p id='render-problem' class='fail' hidden></p>",
            f"<nav>{nav}</nav>",
            _runs_section(series, text),
            _headline_section(series, text),
            _figures_section(plots),
            _breakdown_section(series),
            _comparison_section(comparisons, text),
            _episodes_section(series, text),
            _trajectories_section(series, text),
        ]
    )
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{text(title)}</title><style>{CSS}</style><script>{CHECK_SCRIPT}</script>"
        f"</head><body><main>\n{body}\n</main></body></html>\n"
    )
