"""The journal of a run in progress: what was asked, and each episode as soon as it ends.

A run folder holds ``run.json`` (the agent and the config with its assessment seed, drawn at
random if none was given, written at the start: a resumed run follows the same schedule) and
``episodes.jsonl`` (one record per finished episode, appended and flushed to disk as it ends,
after its trajectory file). A run killed part-way thus keeps every episode that finished; a
resumed run reads them back, runs only the slots of the schedule still missing and merges
both into one result.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from netdojo.errors import NetdojoError
from netdojo.judges.assessment import AssessmentConfig
from netdojo.reports.records import Assessment, AssessmentResult, EpisodeRecord
from netdojo.tools.trajectory import Trajectory

RUN = "run.json"
RESULTS = "results.json"
EPISODES = "episodes.jsonl"
TRAJECTORIES = "trajectories"


class JournalError(NetdojoError):
    """A run folder that cannot be resumed."""


class RunSpec(BaseModel):
    """What a run was asked to do: enough to finish it later."""

    agent: str
    config: AssessmentConfig


class Journal:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.episodes = folder / EPISODES

    def start(self, spec: RunSpec) -> None:
        """Begin a fresh run here: record its spec, forget the episodes and result of an earlier
        one (so a folder without a result always holds an unfinished run)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / RESULTS).unlink(missing_ok=True)
        _write_atomically(self.folder / RUN, spec.model_dump_json(indent=1) + "\n")
        self.episodes.write_text("")

    def spec(self) -> RunSpec:
        path = self.folder / RUN
        if not path.exists():
            raise JournalError(f"{self.folder} holds no run to resume (no {RUN})")
        try:
            return RunSpec.model_validate_json(path.read_text())
        except ValidationError as exc:
            raise JournalError(f"{path} is not a run spec: {exc}") from None

    def append(self, record: EpisodeRecord, trajectory: Trajectory | None) -> None:
        """Keep one finished episode: its trajectory, then its record (the record commits it)."""
        if trajectory is not None:
            folder = self.folder / TRAJECTORIES
            folder.mkdir(exist_ok=True)
            path = folder / f"{record.episode_id}.json"
            _write_atomically(path, trajectory.model_dump_json(indent=1) + "\n")
        with self.episodes.open("a") as out:
            out.write(record.model_dump_json() + "\n")
            out.flush()
            os.fsync(out.fileno())

    def records(self) -> list[EpisodeRecord]:
        """The episodes recorded so far, one per slot; a last line cut short by a kill is
        ignored (its episode runs again)."""
        if not self.episodes.exists():
            return []
        lines = self.episodes.read_text().splitlines()
        found: dict[int | None, EpisodeRecord] = {}
        for number, line in enumerate(lines, start=1):
            try:
                record = EpisodeRecord.model_validate_json(line)
            except ValidationError:
                if number == len(lines):
                    break
                raise JournalError(f"{self.episodes}:{number} is not an episode record") from None
            found.setdefault(record.slot, record)
        return list(found.values())


def open_run(
    agent: str | None, config: dict[str, Any], out: Path, resume: Path | None
) -> tuple[Journal, RunSpec, list[EpisodeRecord]]:
    """The run to do: resumed from ``resume`` (its spec and the episodes it recorded), or a
    new one into ``out``, which must not hold an unfinished run with recorded episodes."""
    if resume is not None:
        journal = Journal(resume)
        return journal, journal.spec(), journal.records()
    if agent is None:
        raise JournalError("give --agent NAME|URL, or --resume DIR to finish a run")
    journal = Journal(out)
    recorded = journal.records()
    if recorded and not (out / RESULTS).exists():
        raise JournalError(
            f"{out} holds an unfinished run ({len(recorded)} episodes recorded): finish it "
            f"with --resume {out}, or choose another --out"
        )
    try:
        spec = RunSpec(agent=agent, config=AssessmentConfig.model_validate(config))
    except ValidationError as exc:
        problems = "; ".join(_problem(e["loc"], e["msg"]) for e in exc.errors())
        raise JournalError(f"bad assessment config: {problems}") from None
    return journal, spec, []


def _problem(loc: tuple[int | str, ...], message: str) -> str:
    return f"{'.'.join(map(str, loc))}: {message}" if loc else message


def keeper(journal: Journal) -> Callable[[dict[str, Any]], None]:
    """A callback for each finished episode streamed by the green agent: journal it."""

    def keep(update: dict[str, Any]) -> None:
        record = EpisodeRecord.model_validate(update["episode"])
        trajectory = update.get("trajectory")
        journal.append(record, Trajectory.model_validate(trajectory) if trajectory else None)

    return keep


def write_results(
    out: Path, result: AssessmentResult, trajectories: Sequence[dict[str, Any]]
) -> Path:
    """Write the finished run: ``results.json`` and each trajectory, as the green agent's
    ``trajectories`` artifact lists them (``{"episode_id", "trajectory"}``); return the
    trajectories' folder."""
    out.mkdir(parents=True, exist_ok=True)
    (out / RESULTS).write_text(result.model_dump_json(indent=1) + "\n")
    folder = out / TRAJECTORIES
    folder.mkdir(exist_ok=True)
    for item in trajectories:
        (folder / f"{item['episode_id']}.json").write_text(json.dumps(item["trajectory"], indent=1))
    return folder


def merge(result: Assessment, earlier: Sequence[EpisodeRecord]) -> Assessment:
    """The assessment of a resumed run with the episodes recorded before it, in schedule order.

    An episode recorded earlier is kept over one run again for the same slot: nothing that
    was recorded is lost or replaced.
    """
    by_slot = {r.slot: r for r in result.episodes}
    by_slot.update({r.slot: r for r in earlier})
    episodes = sorted(by_slot.values(), key=lambda r: -1 if r.slot is None else r.slot)
    recorded = {name: getattr(result, name) for name in Assessment.model_fields}
    return Assessment(**{**recorded, "episodes": episodes})


def _write_atomically(path: Path, text: str) -> None:
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text)
    os.replace(partial, path)
