"""The folder of `netdojo run`: a fresh run or one to resume, kept episode by episode."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from rich.console import Console

from netdojo.judges.assessment import AssessmentConfig
from netdojo.judges.journal import RESULTS, Journal, RunSpec
from netdojo.labs.errors import NetdojoError
from netdojo.reports.records import EpisodeRecord
from netdojo.tools.trajectory import Trajectory


def open_run(
    agent: str | None, config: dict[str, Any], out: Path, resume: Path | None
) -> tuple[Journal, RunSpec, list[EpisodeRecord]]:
    """The run to do: resumed from ``resume`` (its spec and the episodes it recorded), or a
    new one into ``out``, which must not hold an unfinished run with recorded episodes."""
    if resume is not None:
        journal = Journal(resume)
        return journal, journal.spec(), journal.records()
    if agent is None:
        raise NetdojoError("give --agent NAME|URL, or --resume DIR to finish a run")
    journal = Journal(out)
    recorded = journal.records()
    if recorded and not (out / RESULTS).exists():
        raise NetdojoError(
            f"{out} holds an unfinished run ({len(recorded)} episodes recorded): finish it "
            f"with --resume {out}, or choose another --out"
        )
    try:
        spec = RunSpec(agent=agent, config=AssessmentConfig.model_validate(config))
    except ValidationError as exc:
        problems = "; ".join(_problem(e["loc"], e["msg"]) for e in exc.errors())
        raise NetdojoError(f"bad assessment config: {problems}") from None
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


def reap_leftovers(console: Console) -> None:
    """Remove labs of dead netdojo processes (never a live one's) before starting new ones."""
    from netdojo.labs.reaper import reap

    report = reap()
    if not report.empty:
        console.print(f"[dim]leftovers of dead processes: {report.line()}[/]")
