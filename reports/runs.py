"""A run directory as `netdojo run` writes it: `results.json` and `trajectories/<episode>.json`.

Reports, exports and leaderboards read runs through here, and `netdojo merge` writes the run
it makes of shards through here. The summary is recomputed from the episodes, so runs written
under an older schema get every figure the current one has.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from netdojo.errors import NetdojoError
from netdojo.reports.records import AssessmentResult, EpisodeRecord, Summary
from netdojo.reports.summary import summarize
from netdojo.tools.trajectory import Trajectory

RESULTS = "results.json"
TRAJECTORIES = "trajectories"
EPISODES = "episodes.jsonl"
"""The journal of a run in progress: episodes kept as they end, until the result is written."""


class RunError(NetdojoError):
    """A directory that does not hold a readable run."""


@dataclass
class Run:
    path: Path
    result: AssessmentResult
    trajectories: dict[str, Trajectory] = field(default_factory=dict)

    @property
    def agent(self) -> str:
        return agent_name(self.result.participant)

    @property
    def summary(self) -> Summary:
        return summarize(self.result.episodes)

    def trajectory(self, record: EpisodeRecord) -> Trajectory | None:
        return self.trajectories.get(record.episode_id)


def agent_name(participant: str) -> str:
    """The agent's name without the URL it was reached at: "name (http://…)" -> "name"."""
    name, _, rest = participant.partition(" (")
    return name if rest.endswith(")") and "://" in rest else participant


def whole_numbers(value: Any) -> Any:
    """Floats with no fraction back to ints (A2A data parts carry every number as a double)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {k: whole_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [whole_numbers(v) for v in value]
    return value


def load_run(path: Path) -> Run:
    results = path / RESULTS
    if not results.is_file() and (path / EPISODES).is_file():
        raise RunError(
            f"{path}: an unfinished run (no {RESULTS}); finish it with "
            f"`netdojo run --resume {path}`"
        )
    if not results.is_file():
        raise RunError(f"{path}: no {RESULTS}; give a directory written by `netdojo run`")
    try:
        result = AssessmentResult.model_validate_json(results.read_text())
    except ValidationError as exc:
        raise RunError(f"{results}: not an assessment result: {exc}") from None
    trajectories: dict[str, Trajectory] = {}
    for record in result.episodes:
        file = path / TRAJECTORIES / f"{record.episode_id}.json"
        if file.is_file():
            data = whole_numbers(json.loads(file.read_text()))
            trajectories[record.episode_id] = Trajectory.model_validate(data)
    return Run(path=path, result=result, trajectories=trajectories)


def load_runs(paths: list[Path]) -> list[Run]:
    return [load_run(p) for p in paths]


def save_run(run: Run) -> None:
    """Write ``run`` into its folder as `netdojo run` does: ``results.json`` and each
    trajectory."""
    folder = run.path / TRAJECTORIES
    folder.mkdir(parents=True, exist_ok=True)
    (run.path / RESULTS).write_text(run.result.model_dump_json(indent=1) + "\n")
    for episode_id, trajectory in run.trajectories.items():
        (folder / f"{episode_id}.json").write_text(trajectory.model_dump_json(indent=1) + "\n")
