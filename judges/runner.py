"""Run one episode: stage the lab, hand it to the agent under budgets, watch, judge, tear down.

The agent is any coroutine given the episode's public view (`netdojo.tools.contract`): its
brief, topology and tools, never the hidden half; the servers wrap purple agents reached over
A2A into one. Whatever happens, the lab is removed and the episode ends with a record carrying
a precise outcome. A lab that breaks under the agent (a device that dies, an engine that stops
answering) is the harness's failure: `infra_error`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import anyio

from netdojo.errors import describe
from netdojo.judges.checks import JudgeError
from netdojo.judges.episode import Episode, StagingError, open_episode
from netdojo.judges.monitor import FlowMonitor
from netdojo.judges.root_cause import diagnosis_score, false_alarm
from netdojo.judges.verdict import decide, safety_of
from netdojo.labs.errors import LabError
from netdojo.reports.records import (
    NOT_THE_AGENTS,
    Budgets,
    Effort,
    EpisodeRecord,
    Grade,
    MonitorReport,
    Task,
)
from netdojo.scenarios.model import Scenario
from netdojo.tools.contract import Agent, AgentReport, EpisodeView
from netdojo.tools.lab_tools import ToolLimits

SETTLE_S = 10.0  # routing may still be converging when the agent answers


async def _grade_settled(episode: Episode) -> Grade:
    """Grade; after changes, re-grade for a few seconds while a test fails, keep the last."""
    grade = await episode.grade()
    settle = SETTLE_S if episode.trajectory.state_changes else 0.0
    deadline = time.monotonic() + settle
    while not grade.solved and not grade.integrity.fakes and time.monotonic() < deadline:
        await anyio.sleep(1.0)
        grade = await episode.grade()
    return grade


async def _agent_turn(view: EpisodeView, agent: Agent, budget_s: float) -> AgentReport:
    with anyio.move_on_after(budget_s):
        try:
            return await agent(view)
        except Exception as exc:  # a crashing agent is its own outcome, never the harness's
            return AgentReport(status="error", detail=describe(exc))
    return AgentReport(status="timeout", detail=f"no answer within {budget_s:g}s")


def new_record(scenario: Scenario, episode_id: str, trial: int = 0) -> EpisodeRecord:
    """The record of an episode about to open: ``infra_error`` until it is judged."""
    return EpisodeRecord(
        episode_id=episode_id,
        scenario_id=scenario.id,
        family=scenario.family,
        level=scenario.level,
        seed=scenario.seed,
        trial=trial,
        kind=scenario.kind,
        outcome="infra_error",
        healthy=scenario.hidden.healthy,
        cascade=scenario.hidden.cascade is not None,
    )


def note_failure(record: EpisodeRecord, exc: Exception) -> None:
    """Record a failure of the harness while an episode ran or was judged: the judge's own
    (`judge_error`) or any other (`infra_error`); neither is the agent's."""
    record.outcome = "judge_error" if isinstance(exc, JudgeError) else "infra_error"
    record.error = describe(exc)


async def run_episode(
    scenario: Scenario,
    agent: Agent,
    budgets: Budgets,
    episode_id: str,
    trial: int = 0,
    calibration: bool = False,
    task: Task = "repair",
) -> EpisodeRecord:
    """One episode of ``scenario`` for ``agent``; in a ``calibration`` run the agent is told
    which instance it works on (the oracle needs it)."""
    record = new_record(scenario, episode_id, trial)
    started = time.monotonic()
    try:
        episode = await open_episode(
            scenario, episode_id, ToolLimits(max_calls=budgets.max_tool_calls), task
        )
    except StagingError as exc:
        faulted = any(stage in exc.stages for stage in ("settle", "fault_active", "unsolved"))
        record.outcome = "environment_invalid" if faulted else "infra_error"
        record.error = str(exc)
        return record
    except Exception as exc:  # the lab would not come up: the harness's failure, not the agent's
        note_failure(record, exc)
        return record
    record.timings.ready_s = round(time.monotonic() - started, 2)
    record.trajectory = episode.trajectory
    try:
        await _judge(episode, agent, budgets, record, calibration)
    except Exception as exc:
        note_failure(record, exc)
    finally:
        teardown = time.monotonic()
        await episode.close()
        record.timings.teardown_s = round(time.monotonic() - teardown, 2)
    return record


@dataclass(frozen=True)
class Turn:
    """An agent's finished turn, as the judge reads it: the agent's report, what the monitor
    saw, how long it took, the targets passing when it began and the lab's failures by then."""

    report: AgentReport
    watched: MonitorReport
    agent_s: float
    passed_at_start: float
    failures_before: int


def passed_at_start(episode: Episode) -> float:
    """The fraction of target tests passing when the agent is handed the lab."""
    staged = list(episode.stages.values())[-1]  # its probes include every target
    passing = set(staged.passed)
    targets = episode.scenario.hidden.targets
    return sum(t.id in passing for t in targets) / len(targets) if targets else 1.0


async def _judge(
    episode: Episode, agent: Agent, budgets: Budgets, record: EpisodeRecord, calibration: bool
) -> None:
    at_start = passed_at_start(episode)
    monitor = FlowMonitor(episode.lab, episode.scenario.hidden.guards)
    failures_before = len(episode.lab.failures)
    turn_started = time.monotonic()
    async with anyio.create_task_group() as group:
        group.start_soon(monitor.watch)
        report = await _agent_turn(episode.view(calibration), agent, budgets.time_budget_s)
        group.cancel_scope.cancel()
    agent_s = time.monotonic() - turn_started
    turn = Turn(report, monitor.finish(agent_s), agent_s, at_start, failures_before)
    await judge_turn(episode, turn, record)


async def judge_turn(episode: Episode, turn: Turn, record: EpisodeRecord) -> None:
    """Judge a finished turn into ``record``: its verdict, outcome and timings. `LabError`
    when the lab broke during the turn, `JudgeError` when it could not be graded."""
    broken = episode.lab.failures[turn.failures_before :] + await episode.lab.health()
    if broken:
        raise LabError(f"the lab broke during the agent's turn: {'; '.join(dict.fromkeys(broken))}")
    report = turn.report
    if report.model is not None:
        episode.trajectory.model = report.model
    judge_started = time.monotonic()
    try:
        grade = await _grade_settled(episode)
    except LabError:
        raise
    except Exception as exc:
        raise JudgeError(f"grading failed: {describe(exc)}") from exc
    trajectory = episode.trajectory
    effort = Effort(
        wall_s=round(turn.agent_s, 2),
        tool_calls=len(trajectory.steps),
        state_changing_calls=trajectory.state_changes,
        turns=report.turns,
        tokens_in=report.tokens_in,
        tokens_out=report.tokens_out,
    )
    scenario = episode.scenario
    healthy = scenario.hidden.healthy
    record.diagnosis = diagnosis_score(scenario, trajectory, episode.task)
    record.verdict = decide(
        kind=scenario.kind,
        grade=grade,
        targets_passed_at_start=round(turn.passed_at_start, 4),
        safety=safety_of(grade, turn.watched, trajectory, episode.rules.scope, healthy),
        effort=effort,
        agent_status=report.status,
        detail=report.detail,
        healthy=healthy,
        task=episode.task,
        diagnosis=record.diagnosis,
    )
    if healthy:
        record.false_alarm = false_alarm(scenario, trajectory, record.diagnosis)
    record.outcome = record.verdict.outcome
    if record.outcome == "environment_invalid":
        record.error = "the task was found solved although the agent changed nothing"
    record.timings.agent_s = round(turn.agent_s, 2)
    record.timings.judge_s = round(time.monotonic() - judge_started, 2)


async def run_episode_with_retry(
    scenario: Scenario,
    agent: Agent,
    budgets: Budgets,
    episode_id: str,
    trial: int = 0,
    calibration: bool = False,
    task: Task = "repair",
) -> EpisodeRecord:
    """An episode that fails for reasons not the agent's is run once more on a fresh lab."""
    record = await run_episode(scenario, agent, budgets, episode_id, trial, calibration, task)
    if record.outcome in NOT_THE_AGENTS:
        retry_id = f"{episode_id}-retry"
        retried = await run_episode(scenario, agent, budgets, retry_id, trial, calibration, task)
        retried.attempts = 2
        retried.retried_because = f"{record.outcome}: {record.error}"
        return retried
    return record
