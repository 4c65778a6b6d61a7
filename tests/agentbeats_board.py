"""AgentBeats result files made from netdojo runs, and the leaderboard queries checked against
`netdojo leaderboard` over the same episodes.

On AgentBeats the gateway keeps, from the green agent's final task, every artifact's data part
(netdojo's `results` and `trajectories`) and writes them with the run's status; the runner adds
the participants' AgentBeats ids, merges a run's shards into one file, and the leaderboard
queries run in DuckDB over `read_json_auto('results/*.json') AS results`. `check` builds those
files from run folders or artifacts, runs every query of `competitions/agentbeats/leaderboard.json`
and compares each figure with what netdojo's own leaderboard and summary compute.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
from a2a.helpers import new_data_part
from google.protobuf.json_format import MessageToDict

from netdojo.reports.leaderboard import Entry, leaderboard
from netdojo.reports.records import AssessmentResult, Rate, Summary
from netdojo.reports.runs import Run, load_run, whole_numbers
from netdojo.reports.summary import summarize

COMPETITION = Path(__file__).resolve().parents[1] / "competitions" / "agentbeats"
QUERIES = COMPETITION / "leaderboard.json"
ROLE = "agent"
"""The participant's role in scenario.toml; the queries read its AgentBeats id from there."""

Shard = Path | Mapping[str, Any]
"""One run of the green agent: a folder written by `netdojo run`, or the artifacts the green
agent ended with, by name (``{"results": …, "trajectories": …}``, as `assess` in
`netdojo.clients.assessor` returns them)."""


@dataclass(frozen=True)
class Submission:
    """One results file: an agent's leaderboard run, its shards merged."""

    agent_id: str
    shards: Sequence[Shard]
    status: str = "completed"


def artifacts(result: AssessmentResult) -> dict[str, Any]:
    """The green agent's artifacts for a result whose records hold their trajectories."""
    listed = [
        {"episode_id": r.episode_id, "trajectory": r.trajectory.model_dump(mode="json")}
        for r in result.episodes
        if r.trajectory is not None
    ]
    return {"results": result.model_dump(mode="json"), "trajectories": {"trajectories": listed}}


def _artifacts_of(shard: Shard) -> Mapping[str, Any]:
    if not isinstance(shard, Path):
        return shard
    run = load_run(shard)
    listed = [
        {"episode_id": episode, "trajectory": t.model_dump(mode="json")}
        for episode, t in run.trajectories.items()
    ]
    return {"results": run.result.model_dump(mode="json"), "trajectories": {"trajectories": listed}}


def kept_parts(shard: Shard) -> list[Any]:
    """What the gateway keeps of one run: each artifact's data part as A2A carries it (a
    protobuf Struct, so every number arrives as a double)."""
    given = _artifacts_of(shard)
    return [
        MessageToDict(new_data_part(given[name]))["data"]
        for name in ("results", "trajectories")
        if name in given
    ]


def gateway_file(submission: Submission) -> dict[str, Any]:
    return {
        "status": submission.status,
        "participants": {ROLE: submission.agent_id},
        "results": [part for shard in submission.shards for part in kept_parts(shard)],
    }


def write_files(folder: Path, submissions: Sequence[Submission]) -> Path:
    """The leaderboard repository's `results/` folder, one file per submission."""
    results = folder / "results"
    results.mkdir(parents=True, exist_ok=True)
    for index, submission in enumerate(submissions):
        (results / f"submission-{index}.json").write_text(json.dumps(gateway_file(submission)))
    return results


def queries(path: Path = QUERIES) -> list[dict[str, str]]:
    loaded = json.loads(path.read_text())
    assert isinstance(loaded, list) and all(set(q) == {"name", "query"} for q in loaded), path
    return loaded


Table = list[dict[str, Any]]


def run_queries(results: Path, listed: Sequence[Mapping[str, str]]) -> dict[str, Table]:
    """Each query's rows, as the leaderboard shows them, by query name."""
    connection = duckdb.connect()
    pattern = str(results / "*.json").replace("'", "''")
    connection.execute(f"CREATE VIEW results AS SELECT * FROM read_json_auto('{pattern}')")
    tables = {}
    for query in listed:
        cursor = connection.execute(query["query"])
        columns = [d[0] for d in cursor.description or []]
        tables[query["name"]] = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
    return tables


@dataclass
class Expected:
    """netdojo's figures for one agent: its leaderboard entry and the summary of its episodes."""

    entry: Entry
    summary: Summary
    documents: int


def expected(files: Sequence[Path]) -> dict[str, Expected]:
    """By AgentBeats id, what `netdojo leaderboard` and the summary give over the files' runs."""
    runs: list[Run] = []
    id_of: dict[str, str] = {}
    for file in files:
        content = json.loads(file.read_text())
        agent_id = content["participants"][ROLE]
        for index, part in enumerate(content["results"]):
            if "episodes" not in part or not part["episodes"]:
                continue
            result = AssessmentResult.model_validate(whole_numbers(part))
            run = Run(path=Path(f"{file.name}#{index}"), result=result)
            assert id_of.setdefault(run.agent, agent_id) == agent_id, f"{run.agent}: two ids"
            runs.append(run)
    assert len(set(id_of.values())) == len(id_of), f"an id under two agent names: {id_of}"
    pooled: dict[str, list[Run]] = defaultdict(list)
    for run in runs:
        pooled[run.agent].append(run)
    return {
        id_of[e.agent]: Expected(
            entry=e,
            summary=summarize([r for run in pooled[e.agent] for r in run.result.episodes]),
            documents=len(pooled[e.agent]),
        )
        for e in leaderboard(runs).entries
    }


@dataclass(frozen=True)
class Figure:
    """How to read one column from netdojo's figures, and the decimals the query rounds it to
    (None: compared exactly)."""

    value: Callable[[Expected], Any]
    decimals: int | None = None


def _ci(rate: Rate, side: str, known: bool) -> float | None:
    return getattr(rate, side) if known else None


def _percent(pick: Callable[[Expected], Rate], side: str) -> Figure:
    return Figure(lambda x: 100 * getattr(pick(x), side), 1)


def _rates(name: str, pick: Callable[[Expected], Rate]) -> dict[str, Figure]:
    return {
        f"{name} %": _percent(pick, "value"),
        f"{name} low %": _percent(pick, "ci_low"),
        f"{name} high %": _percent(pick, "ci_high"),
    }


COLUMNS: dict[str, dict[str, Figure]] = {
    "Leaderboard": {
        "Rank": Figure(lambda x: x.entry.rank),
        **_rates("Score", lambda x: x.entry.score),
        "Correct %": _percent(lambda x: x.entry.correct, "value"),
        "Safe %": _percent(lambda x: x.entry.safe, "value"),
        "Solved %": _percent(lambda x: x.entry.solved, "value"),
        "Tool calls": Figure(lambda x: x.entry.tool_calls.value, 2),
        "Agent s": Figure(lambda x: x.entry.wall_s.value, 1),
        "Instances": Figure(lambda x: x.entry.instances),
        "Episodes": Figure(lambda x: x.entry.episodes),
        "Excluded": Figure(lambda x: x.entry.excluded),
    },
    "Rates": {
        **_rates("Solved", lambda x: x.entry.solved),
        **_rates("Safe", lambda x: x.entry.safe),
        **_rates("Correct", lambda x: x.entry.correct),
        "Episodes": Figure(lambda x: x.summary.counted),
    },
    "Effort": {
        "Episodes": Figure(lambda x: x.summary.counted),
        "Tool calls": Figure(lambda x: x.entry.tool_calls.value, 2),
        "Tool calls low": Figure(lambda x: _ci(x.entry.tool_calls, "ci_low", x.documents == 1), 2),
        "Tool calls high": Figure(
            lambda x: _ci(x.entry.tool_calls, "ci_high", x.documents == 1), 2
        ),
        "Agent s": Figure(lambda x: x.entry.wall_s.value, 1),
        "Agent s low": Figure(lambda x: _ci(x.entry.wall_s, "ci_low", x.documents == 1), 1),
        "Agent s high": Figure(lambda x: _ci(x.entry.wall_s, "ci_high", x.documents == 1), 1),
        "State-changing calls": Figure(
            lambda x: x.summary.state_changing_calls.value if x.summary.state_changing_calls else 0,
            2,
        ),
        "Turns": Figure(lambda x: x.summary.turns),
        "Tokens in": Figure(lambda x: x.summary.tokens_in),
        "Tokens out": Figure(lambda x: x.summary.tokens_out),
    },
}


def _differs(shown: Any, wanted: Any, decimals: int | None) -> bool:
    if shown is None or wanted is None or decimals is None:
        return shown != wanted
    return abs(shown - wanted) > 0.5 * 10**-decimals + 1e-9


def compare(tables: Mapping[str, Table], figures: Mapping[str, Expected]) -> list[str]:
    """Every figure of every table that is not netdojo's (to the decimals shown)."""
    problems = []
    for name, rows in tables.items():
        columns = COLUMNS.get(name)
        if columns is None:
            problems.append(f"{name}: a query the check does not know")
            continue
        shown_ids = [row.get("id") for row in rows]
        if sorted(map(str, shown_ids)) != sorted(figures):
            problems.append(f"{name}: agents {shown_ids}, netdojo has {sorted(figures)}")
        for row in rows:
            if next(iter(row)) != "id":
                problems.append(f"{name}: the first column is {next(iter(row))!r}, not id")
            if row["id"] not in figures:
                continue
            for column, shown in row.items():
                if column == "id":
                    continue
                if column not in columns:
                    problems.append(f"{name}: column {column!r} is not checked")
                    continue
                figure = columns[column]
                wanted = figure.value(figures[row["id"]])
                if _differs(shown, wanted, figure.decimals):
                    problems.append(f"{name} {row['id']} {column}: {shown}, netdojo {wanted}")
    return problems


def check(
    folder: Path, submissions: Sequence[Submission], path: Path = QUERIES
) -> tuple[dict[str, Table], list[str]]:
    """Write the submissions as result files under ``folder``, run every query over them and
    compare with netdojo: the tables and the figures that differ."""
    results = write_files(folder, submissions)
    tables = run_queries(results, queries(path))
    return tables, compare(tables, expected(sorted(results.glob("*.json"))))
