"""A reset/step environment over live labs, for training and evaluating agents call by call.

`NetworkEnvironment.reset` generates an instance and opens its episode as an assessment does
(`open_episode`: deploy, stage, hand over); `step` calls one of the episode's tools by name and
answers as the MCP server answers (`netdojo.tools.calls`); the episode ends when the agent
submits or a budget is spent, and is then judged as an assessment judges a turn
(`netdojo.judges.runner.judge_turn`), into a record and a reward (`netdojo.judges.reward`).
With ``warm``, a pool (`netdojo.judges.pool`) opens the next episodes in the background, so
that a reset hands one over at once and the last one is torn down off the reset's path.

What the agent side is given holds the public half only: the brief, the topology, the
constraints, the tools and the tools' answers. Each hidden test's result stays in `record`,
for evaluation. An assessment's flow monitor samples the protected flows while an agent works;
here the time between steps is the caller's, so no monitor runs: safety is judged from the
guard tests at the end, the allowlists' refusals and the state audit.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Self

import anyio

from netdojo.errors import NetdojoError, describe
from netdojo.judges.episode import Episode, Opener, Taken, open_cold, open_episode
from netdojo.judges.pool import EpisodePool, PoolNotRunning
from netdojo.judges.reward import counted, final_reward, potential
from netdojo.judges.runner import Turn, judge_turn, new_record, note_failure, passed_at_start
from netdojo.judges.steps import Ending, EndReason, EpisodeState, Observation, StepInfo, StepResult
from netdojo.reports.records import Budgets, EpisodeRecord, MonitorReport, drawn_seed
from netdojo.scenarios.generate import generate
from netdojo.scenarios.model import ToolCall
from netdojo.tools.calls import call_tool, listed_tools, refusal
from netdojo.tools.contract import AgentReport
from netdojo.tools.lab_tools import SUBMITTED, ToolLimits
from netdojo.tools.topology import topology_view

logger = logging.getLogger(__name__)


class NoEpisode(NetdojoError):
    """A step with no episode open: `reset` first."""


@dataclass
class _Running:
    episode: Episode
    record: EpisodeRecord
    at_start: float
    failures_before: int
    started: float
    potential: float
    warm: bool
    reset_s: float
    steps: int = 0
    ending: Ending | None = None
    ended: float | None = None

    def elapsed(self) -> float:
        end = time.monotonic() if self.ended is None else self.ended
        return end - self.started


class NetworkEnvironment:
    """One episode at a time on a live lab: `reset`, `step` until done, `close` (or use it as
    an async context manager). ``shaped`` rewards each state-changing step with the change of
    the lab's potential, grading the lab after it (seconds each); ``warm`` keeps that many
    episodes opening ahead (inside ``async with`` only), their draws seeded by ``warm_seed``
    (read on entering); ``opener`` opens an episode (`open_episode` unless a test gives
    another)."""

    def __init__(
        self,
        budgets: Budgets | None = None,
        *,
        shaped: bool = False,
        warm: int = 0,
        warm_seed: int | None = None,
        opener: Opener = open_episode,
    ) -> None:
        self.budgets = budgets or Budgets()
        self.shaped = shaped
        self.warm = warm
        self.warm_seed = warm_seed
        self._opener = opener
        self._limits = ToolLimits(max_calls=self.budgets.max_tool_calls)
        self._pool: EpisodePool | None = None
        self._running: _Running | None = None
        self._record: EpisodeRecord | None = None
        self._lock = anyio.Lock()

    async def __aenter__(self) -> Self:
        if self.warm:
            pool = EpisodePool(self._opener, self._limits, size=self.warm, seed=self.warm_seed)
            self._pool = await pool.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        try:
            await self.close()
        finally:
            pool, self._pool = self._pool, None
            if pool is not None:
                await pool.__aexit__(*exc_info)

    @property
    def pool(self) -> EpisodePool | None:
        """The warm pool while the environment is entered (`EpisodePool.expect` warms an
        instance before its first reset)."""
        return self._pool

    @property
    def record(self) -> EpisodeRecord | None:
        """The ended episode's record, each hidden test's result included: for evaluation and
        exports, never for the agent. None until the episode ends."""
        return self._record

    async def reset(self, family: str, level: int = 1, seed: int | None = None) -> Observation:
        """Close any open episode and open a fresh instance (a drawn seed unless given): warm
        from the pool when it has one; `ResetFailed` when its lab does not come up (the next
        reset tries again)."""
        asked = time.monotonic()
        cold = not self.warm
        scenario = generate(family, level, _seed(seed)) if cold else None
        async with self._lock:
            await self._close(background=True)
            self._record = None
            if scenario is not None:
                taken = await open_cold(self._opener, scenario, self._limits)
            elif self._pool is None:
                raise PoolNotRunning("a warm environment resets only inside `async with`")
            else:
                taken = await self._pool.take(family, level, seed)
            self._running = _running(taken, round(time.monotonic() - asked, 3))
            return self._observation(self._running.episode)

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
            warm=running.warm,
            reset_s=running.reset_s,
        )

    async def close(self) -> None:
        """Tear the open episode's lab down, and every lab of the pool when warm (resets then
        fail until the environment is entered again); closing again does nothing."""
        async with self._lock:
            await self._close(background=False)
            if self._pool is not None:
                await self._pool.close()

    async def _close(self, background: bool) -> None:
        """Tear the open episode's lab down; ``background``: by the pool, when there is one."""
        running, self._running = self._running, None
        if running is None:
            return
        timings = running.record.timings
        if background and self._pool is not None:
            await self._pool.give_back(running.episode, timings)
            return
        started = time.monotonic()
        await running.episode.close()
        timings.teardown_s = round(time.monotonic() - started, 2)


def _seed(seed: int | None) -> int:
    return drawn_seed() if seed is None else seed


def _running(taken: Taken, reset_s: float) -> _Running:
    episode = taken.episode
    record = new_record(episode.scenario, episode.trajectory.episode)
    record.trajectory = episode.trajectory
    record.timings.ready_s = taken.open_s
    at_start = passed_at_start(episode)
    return _Running(
        episode=episode,
        record=record,
        at_start=at_start,
        failures_before=len(episode.lab.failures),
        started=time.monotonic(),
        potential=at_start,  # the guards hold on a staged lab
        warm=taken.warm,
        reset_s=reset_s,
    )


def _spent(reason: EndReason, budgets: Budgets) -> str:
    if reason == "calls":
        return f"the budget of {budgets.max_tool_calls} tool calls is spent"
    return f"the time budget of {budgets.time_budget_s:g}s is spent"


def _info(running: _Running, changed: bool) -> StepInfo:
    return StepInfo(tool_calls=running.episode.tools.calls, changed_state=changed)
