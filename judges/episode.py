"""One episode's live state: a scenario, its staged lab, the agent's tools and trajectory."""

from __future__ import annotations

import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio

from netdojo.errors import NetdojoError, describe
from netdojo.judges.grading import grade
from netdojo.judges.integrity import rules_for
from netdojo.judges.staging import Staged, Stages, stage_scenario
from netdojo.labs.runtime import LiveLab, start_lab, stop_lab, stop_lab_detached
from netdojo.reports.records import Grade, Task
from netdojo.scenarios import registry
from netdojo.scenarios.briefs import DIAGNOSIS_ONLY
from netdojo.scenarios.model import Scenario
from netdojo.tools.contract import EpisodeView, ScenarioRef
from netdojo.tools.lab_tools import LabTools, ToolLimits
from netdojo.tools.registry import read_only_tools
from netdojo.tools.trajectory import Trajectory


def new_episode_id() -> str:
    """An opaque episode id: random, never derived from the scenario or its seed."""
    return secrets.token_hex(8)


def public_view(
    scenario: Scenario,
    episode_id: str,
    handle: LabTools | None = None,
    reveal: bool = False,
    task: Task = "repair",
) -> EpisodeView:
    """What an agent is given of ``scenario``: its public half and its family's tools (only
    the read-only ones, and a brief that says so, in a diagnosis task); the instance's identity
    only if ``reveal`` (a calibration run, for the oracle)."""
    ref = ScenarioRef(family=scenario.family, level=scenario.level, seed=scenario.seed)
    tools = registry.family(scenario.family).tools
    brief = scenario.public.brief
    if task == "diagnose":
        tools, brief = read_only_tools(tools), f"{brief}\n\n{DIAGNOSIS_ONLY}"
    return EpisodeView(
        brief=brief,
        episode_id=episode_id,
        public=scenario.public,
        tool_names=tools,
        scenario=ref if reveal else None,
        handle=handle,
    )


def instance_name(scenario: Scenario) -> str:
    return f"{scenario.family} level {scenario.level} seed {scenario.seed}"


class StagingError(NetdojoError):
    """The lab could not be brought to the task's starting state (not the agent's doing)."""

    def __init__(self, scenario: Scenario, stages: Stages) -> None:
        self.stages = stages
        failed = next((name for name, stage in stages.items() if not stage.ok), "?")
        super().__init__(
            f"scenario {scenario.id} ({instance_name(scenario)}): staging failed at {failed!r}"
        )


class Episode:
    """A staged lab with its tools; `close` tears the lab down."""

    def __init__(
        self,
        scenario: Scenario,
        lab: LiveLab,
        episode_id: str,
        stages: Stages,
        staged: Staged,
        limits: ToolLimits | None = None,
        task: Task = "repair",
    ) -> None:
        self.scenario = scenario
        self.task = task
        self.lab = lab
        self.stages = stages
        self.staged = staged
        self.rules = rules_for(scenario)
        brief = public_view(scenario, episode_id, task=task).brief
        self.trajectory = Trajectory(episode=episode_id, brief=brief)
        self.tools = LabTools(lab, scenario.public, self.trajectory, limits)
        self.ready_s = 0.0

    def view(self, reveal: bool = False) -> EpisodeView:
        """The agent's view of this episode, with its tools as the in-process handle."""
        return public_view(self.scenario, self.trajectory.episode, self.tools, reveal, self.task)

    async def grade(self) -> Grade:
        return await grade(self.lab, self.scenario, self.staged, self.rules)

    async def close(self, detach: bool = False) -> None:
        """Tear the lab down, here or (``detach``) in a process that outlives this one."""
        if detach:
            stop_lab_detached(self.lab)
            return
        with anyio.CancelScope(shield=True):
            await stop_lab(self.lab)


async def open_episode(
    scenario: Scenario, episode_id: str, limits: ToolLimits | None = None, task: Task = "repair"
) -> Episode:
    """Deploy and stage ``scenario``'s lab; `StagingError` (lab removed) if it does not stage."""
    started = time.monotonic()
    lab = await start_lab(scenario.hidden.lab)
    stages: Stages = {}
    try:
        staged = await stage_scenario(scenario, lab, stages)
        if staged is None:
            raise StagingError(scenario, stages)
    except BaseException:
        with anyio.CancelScope(shield=True):
            await stop_lab(lab)
        raise
    episode = Episode(scenario, lab, episode_id, stages, staged, limits, task)
    episode.ready_s = round(time.monotonic() - started, 2)
    return episode


Opener = Callable[[Scenario, str, ToolLimits], Awaitable[Episode]]
"""Opens an episode: `open_episode`, or a test's stand-in."""


class ResetFailed(NetdojoError):
    """An episode could not be opened: its lab did not deploy or did not stage."""


@dataclass(frozen=True)
class Taken:
    """An opened episode as handed out: by a warm pool, or opened on the spot."""

    episode: Episode
    warm: bool
    """It was ready when asked for: nothing was opened on the way."""
    open_s: float
    """The seconds its lab took to deploy and stage, wherever that happened."""


async def open_cold(opener: Opener, scenario: Scenario, limits: ToolLimits) -> Taken:
    """Open ``scenario``'s episode here and now; `ResetFailed` when it does not come up."""
    started = time.monotonic()
    try:
        episode = await opener(scenario, new_episode_id(), limits)
    except Exception as exc:
        raise ResetFailed(f"{instance_name(scenario)} did not come up: {describe(exc)}") from exc
    return Taken(episode, warm=False, open_s=round(time.monotonic() - started, 2))
