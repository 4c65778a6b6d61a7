"""The report's sections per episode: the table of every episode and each one's verdict and
tool calls."""

from __future__ import annotations

import json
from collections.abc import Sequence

from netdojo.reports.plots import Series
from netdojo.reports.records import NOT_THE_AGENTS, EpisodeRecord
from netdojo.reports.report_markup import Text, anchor, badge, table, td, yes
from netdojo.reports.summary import is_correct, is_safe
from netdojo.tools.trajectory import Step, Trajectory


def episodes_section(series: Sequence[Series], text: Text) -> str:
    rows = []
    for i, x in enumerate(series):
        for r in x.run.result.episodes:
            v = r.verdict
            kept = r.outcome not in NOT_THE_AGENTS
            rows.append(
                [
                    td(text(x.label)),
                    td(f'<a href="#{anchor(i, r)}">{text(r.episode_id)}</a>'),
                    td(text(r.family)),
                    td(str(r.level), numeric=True),
                    td(str(r.seed), numeric=True),
                    td(str(r.trial), numeric=True),
                    td(text(r.kind)),
                    td(badge(r.outcome)),
                    td(yes(is_correct(r)) if kept else "&ndash;"),
                    td(yes(is_safe(r)) if kept else "&ndash;"),
                    td(str(v.effort.tool_calls) if v else "&ndash;", numeric=True),
                    td(f"{v.effort.wall_s:.1f}" if v else "&ndash;", numeric=True),
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
    return "<h2 id='episodes'>Episodes</h2>" + table(header, rows)


def _result_text(step: Step) -> str:
    if step.error is not None:
        return f"error: {step.error}"
    if step.result is None:
        return step.summary
    if isinstance(step.result.get("text"), str):
        others = {k: v for k, v in step.result.items() if k not in ("text", "parsed")}
        return f"{step.result['text']}\n{json.dumps(others, ensure_ascii=False)}"
    return json.dumps(step.result, indent=1, ensure_ascii=False)


def _steps(trajectory: Trajectory, text: Text) -> str:
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


def _verdict(record: EpisodeRecord, text: Text) -> str:
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
                    td(kind),
                    td(text(t.id)),
                    td(text(t.description)),
                    td(yes(t.passed)),
                    td(f"<pre>{text(t.evidence)}</pre>"),
                ]
                for t in results
            ]
    s = v.safety
    outages = [
        [
            td(text(o.probe)),
            td(text(o.description)),
            td(f"{o.started_s:.1f}", numeric=True),
            td(f"{o.lasted_s:.1f}", numeric=True),
            td(f"<pre>{text(o.evidence)}</pre>"),
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
        f"<p>Correct: {yes(v.correct)} (targets passing {v.targets_passed_at_start:.0%} at "
        f"the start, {v.targets_passed:.0%} at the end). Safe: {yes(s.safe)} (guards failed: "
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
        parts.append(table(["test", "id", "description", "passed", "evidence"], tests))
    if outages:
        parts.append(
            "<p>Outages of protected flows seen by the monitor:</p>"
            + table(["probe", "flow", "from s", "lasted s", "evidence"], outages)
        )
    return "\n".join(parts)


def trajectories_section(series: Sequence[Series], text: Text) -> str:
    parts = ["<h2 id='trajectories'>Trajectories</h2>"]
    for i, x in enumerate(series):
        for r in x.run.result.episodes:
            trajectory = x.run.trajectory(r)
            brief = trajectory.brief if trajectory and trajectory.brief else None
            parts.append(
                f'<section class="episode" id="{anchor(i, r)}"><h3>{text(r.episode_id)} '
                f"{badge(r.outcome)}</h3><p class='muted'>{text(x.label)}: {text(r.family)} "
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
