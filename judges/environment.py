"""A reset/step environment over live labs, for training and evaluating agents call by call.

`NetworkEnvironment.reset` generates an instance and opens its episode as an assessment does
(`open_episode`: deploy, stage, hand over); `step` calls one of the episode's tools by name and
answers as the MCP server answers (`netdojo.tools.calls`); the episode ends when the agent
submits or a budget is spent, and is then judged as an assessment judges a turn
(`netdojo.judges.runner.judge_turn`), into a record and a reward (`netdojo.judges.reward`).

What the agent side is given holds the public half only: the brief, the topology, the
constraints, the tools and the tools' answers. Each hidden test's result stays in `record`,
for evaluation. An assessment's flow monitor samples the protected flows while an agent works;
here the time between steps is the caller's, so no monitor runs: safety is judged from the
guard tests at the end, the allowlists' refusals and the state audit.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Self

import anyio
from pydantic import BaseModel, Field

from netdojo.errors import NetdojoError, describe
from netdojo.judges.episode import Episode, new_episode_id, open_episode
from netdojo.judges.reward import counted, final_reward, potential
from netdojo.judges.runner import Turn, judge_turn, new_record, note_failure, passed_at_start
from netdojo.reports.records import Budgets, EpisodeRecord, MonitorReport, Outcome, drawn_seed
from netdojo.scenarios.generate import generate
from netdojo.scenarios.model import Scenario, ToolCall
from netdojo.tools.calls import call_tool, listed_tools, refusal
from netdojo.tools.contract import AgentReport, ListedTool
from netdojo.tools.lab_tools import SUBMITTED, ToolLimits
from netdojo.tools.topology import TopologyView, topology_view

logger = logging.getLogger(__name__)

EndReason = Literal["submitted", "calls", "time"]


class ResetFailed(NetdojoError):
    """An episode could not be opened: its lab did not deploy or did not stage."""


class NoEpisode(NetdojoError):
    """A step with no episode open: `reset` first."""


class Observation(BaseModel):
    """What an agent is handed when an episode opens; never the instance's name, its seed or
    anything of its hidden half."""

    episode_id: str = Field(description="random, never derived from the instance")
    brief: str
    constraints: list[str]
    topology: TopologyView
    tools: list[ListedTool] = Field(description="as an MCP server lists them")


class Ending(BaseModel):
    """How an episode ended: why, its verdict's outcome and its final reward."""

    reason: EndReason
    outcome: Outcome
    reward: float = Field(description="the final reward, by `netdojo.judges.reward`")
    counted: bool = Field(description="False when the outcome was not the agent's doing")
    targets_passed: float | None = Field(description="the fraction of targets passing at the end")
    safe: bool | None


class StepInfo(BaseModel):
    tool_calls: int = Field(description="the calls the tool budget has counted")
    changed_state: bool = Field(description="this call could change a device's state")
    ending: Ending | None = Field(default=None, description="once the episode has ended")


class StepResult(BaseModel):
    """A tool's answer to one step, as an MCP client would read it, and where the episode is."""

    result: dict[str, Any] | None = Field(default=None, description="the structured result")
    error: str | None = Field(default=None, description="the tool-level error text")
    is_error: bool = False
    done: bool = False
    truncated: bool = Field(default=False, description="ended by a budget, not by submit")
    reward: float = 0.0
    info: StepInfo


class EpisodeState(BaseModel):
    episode_id: str | None = Field(description="none before the first reset and after close")
    steps: int = 0
    tool_calls: int = Field(0, description="the calls the tool budget has counted")
    elapsed_s: float = Field(0.0, description="since the episode was handed over, until it ended")
    done: bool = False
    submitted: bool = False
    ending: Ending | None = Field(default=None, description="once the episode has ended")


Opener = Callable[[Scenario, str, ToolLimits], Awaitable[Episode]]


@dataclass
class _Running:
    episode: Episode
    record: EpisodeRecord
    at_start: float
    failures_before: int
    started: float
    potential: float
    steps: int = 0
    ending: Ending | None = None
    ended: float | None = None

    def elapsed(self) -> float:
        end = time.monotonic() if self.ended is None else self.ended
        return end - self.started


class NetworkEnvironment:
    """One episode at a time on a live lab: `reset`, `step` until done, `close` (or use it as
    an async context manager). ``shaped`` rewards each state-changing step with the change of
    the lab's potential, grading the lab after it (seconds each); ``opener`` opens an episode
    (`open_episode` unless a test gives another)."""

    def __init__(
        self,
        budgets: Budgets | None = None,
        *,
        shaped: bool = False,
        opener: Opener = open_episode,
    ) -> None:
        self.budgets = budgets or Budgets()
        self.shaped = shaped
        self._opener = opener
        self._running: _Running | None = None
        self._record: EpisodeRecord | None = None
        self._lock = anyio.Lock()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def record(self) -> EpisodeRecord | None:
        """The ended episode's record, each hidden test's result included: for evaluation and
        exports, never for the agent. None until the episode ends."""
        return self._record

    async def reset(self, family: str, level: int = 1, seed: int | None = None) -> Observation:
        """Close any open episode and open a fresh instance (a drawn seed unless given);
        `ResetFailed` when its lab does not come up (the next reset tries again)."""
        scenario = generate(family, level, drawn_seed() if seed is None else seed)
        async with self._lock:
            await self._close()
            self._record = None
            self._running = await self._open(scenario)
            return self._observation(self._running.episode)

    async def _open(self, scenario: Scenario) -> _Running:
        episode_id = new_episode_id()
        started = time.monotonic()
        limits = ToolLimits(max_calls=self.budgets.max_tool_calls)
        try:
            episode = await self._opener(scenario, episode_id, limits)
        except Exception as exc:
            instance = f"{scenario.family} level {scenario.level} seed {scenario.seed}"
            raise ResetFailed(f"{instance} did not come up: {describe(exc)}") from exc
        record = new_record(scenario, episode_id)
        record.trajectory = episode.trajectory
        record.timings.ready_s = round(time.monotonic() - started, 2)
        at_start = passed_at_start(episode)
        return _Running(
            episode=episode,
            record=record,
            at_start=at_start,
            failures_before=len(episode.lab.failures),
            started=time.monotonic(),
            potential=at_start,  # the guards hold on a staged lab
        )

    def _observation(self, episode: Episode) -> Observation:
        view = episode.view()
        public = episode.scenario.public
        return Observation(
            episode_id=view.episode_id,
            brief=view.brief,
            constraints=public.constraints,
            topology=topology_view(public),
            tools=listed_tools(view.tool_names),
        )

    async def step(self, call: ToolCall) -> StepResult:
        """Call one tool. Whatever the call, the answer is a result or a tool-level error;
        `NoEpisode` only when no episode is open."""
        async with self._lock:
            running = self._running
            if running is None:
                raise NoEpisode("no episode is open; call reset first")
            running.steps += 1
            if running.ending is not None:
                return self._refused_after(running, call.tool)
            if running.elapsed() >= self.budgets.time_budget_s:
                await self._end(running, "time")
                error = refusal(call.tool, self._why_ended(running))
                late = StepResult(error=error, is_error=True, info=_info(running, False))
                return self._ended(running, late)
            return await self._call(running, call)

    async def _call(self, running: _Running, call: ToolCall) -> StepResult:
        episode = running.episode
        before = len(episode.trajectory.steps)
        offered = episode.view().tool_names
        answer = await call_tool(episode.tools, offered, call.tool, call.arguments)
        changed = any(step.changed_state for step in episode.trajectory.steps[before:])
        result = StepResult(
            result=answer.result,
            error=answer.error,
            is_error=answer.is_error,
            info=_info(running, changed),
        )
        reason = self._reason_to_end(running)
        if reason is not None:
            await self._end(running, reason)
            return self._ended(running, result)
        if self.shaped and changed:
            result.reward = await self._shaping(running)
        return result

    def _reason_to_end(self, running: _Running) -> EndReason | None:
        tools = running.episode.tools
        if tools.submitted:
            return "submitted"
        if tools.calls >= self.budgets.max_tool_calls:
            return "calls"
        if running.elapsed() >= self.budgets.time_budget_s:
            return "time"
        return None

    def _ended(self, running: _Running, result: StepResult) -> StepResult:
        """``result`` as the last step of the episode: done, with the final reward (less the
        potential reached, when shaped)."""
        ending = running.ending
        assert ending is not None
        result.done = True
        result.truncated = ending.reason != "submitted"
        result.reward = ending.reward - (running.potential if self.shaped else 0.0)
        result.info.ending = ending
        return result

    def _why_ended(self, running: _Running) -> str:
        """Why a call is refused once the episode has ended."""
        ending = running.ending
        assert ending is not None
        if ending.reason == "submitted":
            return SUBMITTED
        return f"{_spent(ending.reason, self.budgets)}; the episode has ended"

    def _refused_after(self, running: _Running, tool: str) -> StepResult:
        """A step after the end: refused, done, and worth nothing more."""
        ending = running.ending
        assert ending is not None
        info = _info(running, False)
        info.ending = ending
        return StepResult(
            error=refusal(tool, self._why_ended(running)),
            is_error=True,
            done=True,
            truncated=ending.reason != "submitted",
            info=info,
        )

    async def _end(self, running: _Running, reason: EndReason) -> Ending:
        """Judge the episode as an assessment judges a turn; its lab stays up until reset or
        close."""
        running.ended = time.monotonic()
        episode, record = running.episode, running.record
        if reason == "time":
            report = AgentReport(status="timeout", detail=_spent(reason, self.budgets))
        else:
            report = AgentReport(status="done", detail=episode.trajectory.submitted or "")
        unwatched = MonitorReport(flows=0)
        turn = Turn(report, unwatched, running.elapsed(), running.at_start, running.failures_before)
        try:
            await judge_turn(episode, turn, record)
        except Exception as exc:
            note_failure(record, exc)
        verdict = record.verdict
        running.ending = Ending(
            reason=reason,
            outcome=record.outcome,
            reward=final_reward(record),
            counted=counted(record),
            targets_passed=verdict.targets_passed if verdict else None,
            safe=verdict.safety.safe if verdict else None,
        )
        self._record = record
        return running.ending

    async def _shaping(self, running: _Running) -> float:
        """The change of the lab's potential since the last shaped step; 0 when grading fails."""
        try:
            grade = await running.episode.grade()
        except Exception as exc:
            logger.warning("no shaping for this step: grading failed (%s)", describe(exc))
            return 0.0
        now = potential(grade)
        change, running.potential = now - running.potential, now
        return change

    def state(self) -> EpisodeState:
        """The open episode's state (an empty one when none is open)."""
        running = self._running
        if running is None:
            return EpisodeState(episode_id=None)
        tools = running.episode.tools
        return EpisodeState(
            episode_id=running.record.episode_id,
            steps=running.steps,
            tool_calls=tools.calls,
            elapsed_s=round(running.elapsed(), 3),
            done=running.ending is not None,
            submitted=tools.submitted,
            ending=running.ending,
        )

    async def close(self) -> None:
        """Tear the open episode's lab down; closing again does nothing."""
        async with self._lock:
            await self._close()

    async def _close(self) -> None:
        running, self._running = self._running, None
        if running is not None:
            started = time.monotonic()
            await running.episode.close()
            running.record.timings.teardown_s = round(time.monotonic() - started, 2)


def _spent(reason: EndReason, budgets: Budgets) -> str:
    if reason == "calls":
        return f"the budget of {budgets.max_tool_calls} tool calls is spent"
    return f"the time budget of {budgets.time_budget_s:g}s is spent"


def _info(running: _Running, changed: bool) -> StepInfo:
    return StepInfo(tool_calls=running.episode.tools.calls, changed_state=changed)
