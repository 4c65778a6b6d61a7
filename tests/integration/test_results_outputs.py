"""What runs leave behind, end to end: two real `netdojo run`s on the same instances, then
`netdojo report`, `export` and `leaderboard` on them; the reports open in headless Chromium.

Run A is a purple agent served here over A2A that requires a bearer token of its own (given
to `netdojo run` in a file) and does the heuristic agent's work, but first echoes its episode's
token and its own into a tool call and then into its answer; run B is the built-in `noop`. No
token may appear in anything written.

What the outputs must say follows from the verdicts the runs recorded, whatever they are: the
heuristic agent may solve an instance or not (on a loaded machine it can find nothing to
change), and the reports, exports and leaderboard are checked against the results either way.
"""

from __future__ import annotations

import html
import json
import re
import secrets
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from netdojo.cli import app
from netdojo.clients.heuristic import troubleshoot
from netdojo.clients.purple import PurpleExecutor
from netdojo.clients.session import ToolCallError, ToolSession
from netdojo.reports.records import NOT_THE_AGENTS
from netdojo.servers.a2a_app import a2a_app, agent_card
from netdojo.servers.serving import free_port, serve_uvicorn
from netdojo.tools.contract import EpisodeView

NETDOJO = str(Path(sys.executable).parent / "netdojo")
SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"
CONFIG = ["--families", "static-routing,host-config", "--levels", "1", "--episodes", "2",
          "--concurrency", "2", "--seed", "1"]  # fmt: skip
"""Seed 1 draws no healthy control: noop would solve one, and the two runs are compared as
repairs."""
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking", "--disable-component-update"]  # fmt: skip


Episode = dict[str, Any]


@dataclass
class Runs:
    a: Path
    b: Path
    tokens: list[str] = field(default_factory=list)


def episodes(run: Path) -> list[Episode]:
    recorded: list[Episode] = json.loads((run / "results.json").read_text())["episodes"]
    return recorded


def counted(run: Path) -> list[Episode]:
    """The run's episodes that count: the harness's own failures are left out of every rate."""
    return [e for e in episodes(run) if e["outcome"] not in NOT_THE_AGENTS]


def traced(run: Path) -> list[Episode]:
    """The run's episodes that left a trajectory (every one whose lab came up)."""
    return [e for e in episodes(run) if (run / "trajectories" / f"{e['episode_id']}.json").exists()]


def solved_safe(episode: Episode) -> bool:
    return episode["outcome"] == "solved" and episode["verdict"]["safety"]["safe"]


def correct_and_safe(episode: Episode) -> bool:
    verdict = episode["verdict"]
    return bool(verdict and verdict["correct"] and verdict["safety"]["safe"])


def netdojo(*args: str | Path) -> str:
    """Run a `netdojo` command in this process; its standard output."""
    done = CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)
    assert done.exit_code == 0, f"netdojo {args} failed:\n{done.output}"
    return done.stdout


async def _assess(base: Path, tokens: list[str]) -> None:
    own = secrets.token_hex(24)  # lowercase hex: only its exact redaction keeps it out
    tokens.append(own)
    (base / "agent-token").write_text(own)

    async def leaky(session: ToolSession, task: EpisodeView) -> str:
        assert task.token
        tokens.append(task.token)
        try:
            command = f"show version Authorization: Bearer {task.token} {own}"
            await session.call("show", {"device": "nowhere", "command": command})
        except ToolCallError:
            pass
        summary = await troubleshoot(session, task.brief)
        return f"{summary} (my tokens were {task.token} and {own})"

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    card = agent_card("test-leaky", "heuristic work, careless with its token", url, [],
                      streaming=False)  # fmt: skip
    app = a2a_app(card, PurpleExecutor(lambda: leaky), token=own)
    async with serve_uvicorn(app, "127.0.0.1", port):
        await anyio.run_process(
            [NETDOJO, "run", "--agent", url, "--agent-token-file", str(base / "agent-token"),
             *CONFIG, "--out", str(base / "a")],
            check=True,
        )  # fmt: skip
    await anyio.run_process(
        [NETDOJO, "run", "--agent", "noop", *CONFIG, "--out", str(base / "b")], check=True
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    base = tmp_path_factory.mktemp("runs")
    found = Runs(a=base / "a", b=base / "b")
    anyio.run(_assess, base, found.tokens)
    return found


@dataclass
class Outputs:
    compared: Path
    summary: str
    sft: str
    atif_solved_safe: Path
    atif: str
    leaderboard: str
    table: str


@pytest.fixture(scope="module")
def outputs(runs: Runs, tmp_path_factory: pytest.TempPathFactory) -> Outputs:
    """`netdojo report`, `export` and `leaderboard` on the two runs."""
    base = tmp_path_factory.mktemp("outputs")
    compared, solved_safe = base / "compared.html", base / "atif.jsonl"
    summary = netdojo("report", runs.a, "--compare", runs.b, "--output", compared)
    netdojo("export", runs.a, runs.b, "--format", "atif", "--only", "solved-safe",
            "--output", solved_safe)  # fmt: skip
    return Outputs(
        compared=compared,
        summary=summary,
        sft=netdojo("export", runs.a, runs.b, "--format", "sft"),
        atif_solved_safe=solved_safe,
        atif=netdojo("export", runs.a, runs.b, "--format", "atif"),
        leaderboard=netdojo("leaderboard", runs.b, runs.a, "--json"),
        table=netdojo("leaderboard", runs.a, runs.b),
    )


def render_status(page: Path, profile: Path) -> dict[str, object]:
    """Open ``page`` in headless Chromium; the page's own check writes what rendered."""
    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is needed (apt-get install chromium; make test does it)"
    done = subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    found = re.search(r'data-render-status="([^"]*)"', done.stdout)
    assert found and found.group(1), f"no render status in the page:\n{done.stderr[-2000:]}"
    status: dict[str, object] = json.loads(html.unescape(found.group(1)))
    status["body"] = 'data-render="ok"' in done.stdout
    status["problem shown"] = (
        re.search(r'<p id="render-problem"[^>]*\bhidden\b', done.stdout) is None
    )
    return status


def test_run_writes_results_summary_report_and_trajectories(runs: Runs) -> None:
    results = json.loads((runs.a / "results.json").read_text())
    assert results["schema_version"] == "1.2"
    provenance = results["provenance"]
    assert provenance["frr"] and provenance["docker"] and provenance["cpus"]
    assert provenance["budgets"] == {"max_tool_calls": 60, "time_budget_s": 600.0}
    assert len(provenance["instances"]) == 2 and provenance["assessment_seed"] == 1
    assert set(results["summary"]["breakdown"]) == {"family", "level", "kind"}
    outcomes = [e["outcome"] for e in results["episodes"]]
    assert len(outcomes) == 2 and results["summary"]["outcomes"] == dict(Counter(outcomes))
    for episode in results["episodes"]:
        if episode["verdict"] is None:  # the agent never had its turn
            continue
        trajectory = json.loads(
            (runs.a / "trajectories" / f"{episode['episode_id']}.json").read_text()
        )
        assert trajectory["brief"]
        if episode["outcome"] not in ("agent_error", "timeout"):
            assert trajectory["steps"][-1]["tool"] == "submit"
        leak = trajectory["steps"][0]
        assert leak["tool"] == "show" and "Bearer [redacted]" in leak["arguments"]["command"]
    kept = counted(runs.a)
    solved = sum(e["outcome"] == "solved" for e in kept) / len(kept) if kept else 0.0
    summary = (runs.a / "summary.md").read_text()
    assert f"| solved | {solved:.1%} |" in summary and "### By family" in summary
    assert (runs.a / "report.html").stat().st_size > 50_000


def test_reports_render_every_plot_offline_in_chromium(
    runs: Runs, outputs: Outputs, tmp_path: Path
) -> None:
    shared = {(e["scenario_id"], e["trial"]) for e in counted(runs.a)} & {
        (e["scenario_id"], e["trial"]) for e in counted(runs.b)
    }
    instances = len({scenario for scenario, _ in shared})
    assert "## Paired: A = test-leaky" in outputs.summary
    assert f"{len(shared)} pairs on {instances} shared instances" in outputs.summary
    page = outputs.compared.read_text()
    assert page.count('class="episode"') == 4 and "Paired comparison" in page
    for name, report in (("run", runs.a / "report.html"), ("compared", outputs.compared)):
        status = render_status(report, tmp_path / f"profile-{name}")
        assert status["plots"] == 5 and status["rendered"] == 5, status
        assert status["failed"] == [] and status["fetched"] == [] and status["problems"] == []
        assert status["body"] is True and status["problem shown"] is False


def _validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads((SCHEMAS / name).read_text()))


def test_exports_match_their_schemas(runs: Runs, outputs: Outputs) -> None:
    exported = len(traced(runs.a)) + len(traced(runs.b))
    sft = [json.loads(line) for line in outputs.sft.splitlines()]
    assert len(sft) == exported
    schema = _validator("sft.schema.json")
    for line in sft:
        assert [e.message for e in schema.iter_errors(line)] == []
        called = [c["id"] for m in line["messages"] for c in m.get("tool_calls", [])]
        answered = [m["tool_call_id"] for m in line["messages"] if m["role"] == "tool"]
        assert called == answered
        assert {t["function"]["name"] for t in line["tools"]} >= {"show", "configure", "submit"}
    schema = _validator("atif-v1.7.schema.json")
    every = [json.loads(line) for line in outputs.atif.splitlines()]
    kept = [json.loads(line) for line in outputs.atif_solved_safe.read_text().splitlines()]
    assert len(every) == exported
    expected = [agent for run, agent in ((runs.a, "test-leaky"), (runs.b, "netdojo-noop"))
                for e in traced(run) if solved_safe(e)]  # fmt: skip
    assert [a["extra"]["agent"] for a in kept] == expected
    for document in every:
        assert [e.message for e in schema.iter_errors(document)] == []
    assert all(a["final_metrics"]["extra"]["outcome"] == "solved" for a in kept)


def test_leaderboard_ranks_the_runs(runs: Runs, outputs: Outputs) -> None:
    entries = json.loads(outputs.leaderboard)["entries"]
    by_agent = {e["agent"]: e for e in entries}
    assert set(by_agent) == {"test-leaky", "netdojo-noop"}
    for agent, run in (("test-leaky", runs.a), ("netdojo-noop", runs.b)):
        entry, kept = by_agent[agent], counted(run)
        score = sum(map(correct_and_safe, kept)) / len(kept) if kept else 0.0
        assert entry["score"]["value"] == score and entry["score"]["n"] == len(kept)
        assert set(entry["score"]) == {"value", "ci_low", "ci_high", "n"}
        instances = len({e["scenario_id"] for e in kept})
        assert (entry["instances"], entry["episodes"]) == (instances, len(kept))
    assert [e["rank"] for e in entries] == [1, 2]
    assert entries[0]["score"]["value"] >= entries[1]["score"]["value"]
    assert "test-leaky" in outputs.table and "netdojo-noop" in outputs.table


def test_no_token_is_ever_written(runs: Runs, outputs: Outputs) -> None:
    assert len(runs.tokens) >= 3  # the agent's own and one per episode (two if it was rerun)
    written = [p for folder in (runs.a, runs.b) for p in folder.rglob("*") if p.is_file()]
    written += [outputs.compared, outputs.atif_solved_safe]
    texts = [p.read_text() for p in written]
    texts += [outputs.summary, outputs.sft, outputs.atif, outputs.leaderboard, outputs.table]
    assert any("[redacted]" in t for t in texts)
    for token in runs.tokens:
        assert not any(token in t for t in texts)
