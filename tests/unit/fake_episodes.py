"""Episodes of real scenarios on a lab that is not there: every command succeeds, and the grades
are given in turn. For the step environment's logic, before any lab."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from netdojo.judges.episode import Episode
from netdojo.judges.staging import Staged, StageResult
from netdojo.labs.runtime import ExecResult, LiveLab
from netdojo.reports.records import Deviation, Grade, HiddenTestResult, IntegrityReport
from netdojo.scenarios.model import Scenario
from netdojo.tools.lab_tools import ToolLimits

STARTED = {"fault_active": StageResult(ok=True, seconds=0.0, passed=[])}


class AbsentLab:
    """Runs every command with success and records it; never broken."""

    def __init__(self) -> None:
        self.failures: list[str] = []
        self.commands: list[tuple[str, list[str]]] = []

    async def exec(self, device: str, argv: list[str], **_: object) -> ExecResult:
        self.commands.append((device, argv))
        return ExecResult(device=device, argv=argv, exit_code=0, stdout="", stderr="", duration_s=0)

    async def health(self) -> list[str]:
        return []


class GivenEpisode(Episode):
    """An episode whose grades are ``grades`` in turn, the last one repeated."""

    def __init__(
        self, scenario: Scenario, episode_id: str, limits: ToolLimits, grades: list[Grade]
    ) -> None:
        lab = cast(LiveLab, AbsentLab())
        super().__init__(scenario, lab, episode_id, STARTED, Staged(baseline={}, start={}), limits)
        self.grades = list(grades)
        self.closed = 0

    async def grade(self) -> Grade:
        return self.grades.pop(0) if len(self.grades) > 1 else self.grades[0]

    async def close(self, detach: bool = False) -> None:
        self.closed += 1


def graded(targets: Sequence[bool], guards: Sequence[bool] = (), faked: bool = False) -> Grade:
    """A grade with these target and guard results (ids that name no real test)."""

    def results(kind: str, passed: Sequence[bool]) -> list[HiddenTestResult]:
        return [
            HiddenTestResult(id=f"{kind}:{i}", description=kind, passed=p, evidence="-")
            for i, p in enumerate(passed)
        ]

    fakes = [Deviation(device="r1", kind="route", detail="-", evidence="-")] if faked else []
    passing = sum(targets) / len(targets) if targets else 1.0
    return Grade(
        solved=all(targets) and all(guards) and not faked,
        targets_passed=passing,
        targets=results("target", targets),
        guards=results("guard", guards),
        adherence=[],
        integrity=IntegrityReport(fakes=fakes),
    )


SOLVED = graded([True, True], [True])
UNSOLVED = graded([False, False], [True])


class Openings:
    """An opener of `GivenEpisode`s with these grades, keeping each episode it opened; the
    first ``failing`` openings fail as a lab that does not deploy."""

    def __init__(self, grades: list[Grade] | None = None, failing: int = 0) -> None:
        self.grades = grades or [SOLVED]
        self.failing = failing
        self.opened: list[GivenEpisode] = []

    async def __call__(self, scenario: Scenario, episode_id: str, limits: ToolLimits) -> Episode:
        if self.failing:
            self.failing -= 1
            raise RuntimeError("the engine did not answer")
        episode = GivenEpisode(scenario, episode_id, limits, self.grades)
        self.opened.append(episode)
        return episode
