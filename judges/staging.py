"""Bring a scenario's live lab to the state an agent starts from.

Reactive: the baseline passes every target and guard test; the faults are injected through
the tools an agent uses; then each fault is present, every symptom in the brief is real and
the guards still hold. A healthy control has no fault: its guards pass and it is handed over
as it is. Constructive: the guards pass and every target fails on the initial
state. The audit and every episode stage a lab the same way.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import anyio
from pydantic import BaseModel, Field

from netdojo.judges.checks import Owners, owners_of, run_tests
from netdojo.judges.snapshot import LabState, snapshot_lab
from netdojo.labs.runtime import LiveLab
from netdojo.reports.records import HiddenTestResult
from netdojo.scenarios.hidden_tests import HiddenTest
from netdojo.scenarios.model import Scenario, ToolCall
from netdojo.tools.actions import apply

BASELINE_DEADLINE_S = 90.0
FAULT_DEADLINE_S = 60.0
"""How long an injected fault may take to show. RIP's take longest: a route is withdrawn only
once its 15 s timeout has run out and the ring has counted to infinity, 12-30 s on a loaded
machine. Staging moves on as soon as the fault shows."""
POLL_S = 0.5
SETTLED_ROUNDS = 2
"""Rounds in a row the guards pass after an injection before the faults are probed: a daemon
can take a moment to act on the last injected change (ospfd resets an adjacency on an MTU
change), which one round run at once would miss."""


class StageResult(BaseModel):
    ok: bool
    seconds: float
    detail: str = ""
    failed: list[HiddenTestResult] = Field(default_factory=list)
    passed: list[str] = Field(default_factory=list, description="tests that held, when it ended")


Stages = dict[str, StageResult]
Condition = Callable[[list[HiddenTestResult]], bool]


class Staged(BaseModel):
    """The evidence a staged lab keeps for the judge: every device's state as planned
    (before any fault) and as handed to the agent."""

    baseline: LabState
    start: LabState


async def poll(
    lab: LiveLab,
    tests: list[HiddenTest],
    holds: Condition,
    deadline: float,
    owners: Owners | None,
    rounds: int = 1,
) -> StageResult:
    """Run ``tests`` until ``holds`` is true of their results in ``rounds`` rounds in a row,
    or ``deadline`` seconds pass."""
    started = time.monotonic()
    results: list[HiddenTestResult] = []
    held = 0
    while True:
        results = await run_tests(lab, tests, owners)
        held = held + 1 if holds(results) else 0
        if held >= rounds:
            return StageResult(
                ok=True,
                seconds=round(time.monotonic() - started, 2),
                passed=[r.id for r in results if r.passed],
            )
        if time.monotonic() - started > deadline:
            break
        await anyio.sleep(POLL_S)
    return StageResult(
        ok=False,
        seconds=round(time.monotonic() - started, 2),
        detail=f"not reached within {deadline:.0f}s",
        failed=[r for r in results if not r.passed],
    )


async def apply_all(lab: LiveLab, calls: list[ToolCall]) -> StageResult:
    started = time.monotonic()
    for call in calls:
        result = await apply(lab, call)
        if not result.ok:
            detail = result.model_dump_json(exclude_defaults=True)
            return StageResult(ok=False, seconds=time.monotonic() - started, detail=detail)
    return StageResult(ok=True, seconds=round(time.monotonic() - started, 2))


def all_pass(results: list[HiddenTestResult]) -> bool:
    return all(r.passed for r in results)


def none_pass(results: list[HiddenTestResult]) -> bool:
    return not any(r.passed for r in results)


def fault_active(n_present: int, n_symptoms: int, n_guards: int) -> Condition:
    """Faults present, every symptom real, guards intact, and some target failing."""

    def holds(results: list[HiddenTestResult]) -> bool:
        present = results[:n_present]
        symptoms = results[n_present : n_present + n_symptoms]
        guards = results[n_present + n_symptoms : n_present + n_symptoms + n_guards]
        others = results[n_present + n_symptoms + n_guards :]
        some_target_fails = bool(symptoms) or not all_pass(others)
        return all_pass(present) and none_pass(symptoms) and all_pass(guards) and some_target_fails

    return holds


async def _run(stages: Stages, name: str, result: Awaitable[StageResult]) -> bool:
    stages[name] = await result
    return stages[name].ok


async def save_running_config(lab: LiveLab) -> None:
    """Make each router's configuration file show the running state as FRR writes it, so no
    file an agent can read holds the configuration from before the faults, or differs from
    the running state at all."""

    async def save(device: str) -> None:
        script = "vtysh -c 'write memory' && rm -f /etc/frr/frr.conf.sav"
        await lab.exec_entered(device, ["sh", "-c", script], timeout=30)

    async with anyio.create_task_group() as group:
        for spec in lab.spec.devices:
            if spec.role == "router":
                group.start_soon(save, spec.name)


async def stage_scenario(
    scenario: Scenario, lab: LiveLab, stages: Stages, witnessed: bool = False
) -> Staged | None:
    """Stage ``lab`` for ``scenario``, recording each stage in ``stages``; the snapshots of the
    plan and of the starting state when staged, else None.

    After the injection the guards must hold again before any fault is probed: an injection
    can restart an adjacency (an MTU change does), and a probe sent while routing reconverges
    takes another way, where it can teach the sender something that hides the fault for good
    (a smaller path MTU, which a host keeps for ten minutes).

    Reachability tests are witnessed at their destination only when ``witnessed``: staging runs
    before any agent can touch the lab, so nothing can fake a probe yet, and the audit (which
    witnesses) has shown that the plan's owners answer. The judge always witnesses.
    """
    hidden = scenario.hidden
    owners = owners_of(scenario.public) if witnessed else None
    if scenario.kind == "constructive":
        baseline = poll(lab, hidden.guards, all_pass, BASELINE_DEADLINE_S, owners)
        if not await _run(stages, "baseline", baseline) or not await _run(
            stages, "unsolved", poll(lab, hidden.targets, none_pass, 0, owners)
        ):
            return None
        planned = await _saved_snapshot(lab)
        return Staged(baseline=planned, start=planned)
    if hidden.healthy:
        healthy = poll(lab, hidden.guards, all_pass, BASELINE_DEADLINE_S, owners)
        if not await _run(stages, "baseline", healthy):
            return None
        planned = await _saved_snapshot(lab)
        return Staged(baseline=planned, start=planned)
    present = [p for f in hidden.faults for p in f.present]
    symptoms = [p for p in hidden.targets if p.kind == "ping"]
    others = [p for p in hidden.targets if p.kind != "ping"]
    baseline = poll(lab, hidden.targets + hidden.guards, all_pass, BASELINE_DEADLINE_S, owners)
    if not await _run(stages, "baseline", baseline):
        return None
    planned = await snapshot_lab(lab)
    injections = [call for fault in hidden.faults for call in fault.inject]
    if not await _run(stages, "inject", apply_all(lab, injections)):
        return None
    settled = poll(lab, hidden.guards, all_pass, FAULT_DEADLINE_S, owners, rounds=SETTLED_ROUNDS)
    if not await _run(stages, "settle", settled):
        return None
    active = fault_active(len(present), len(symptoms), len(hidden.guards))
    tests = present + symptoms + hidden.guards + others
    if not await _run(stages, "fault_active", poll(lab, tests, active, FAULT_DEADLINE_S, owners)):
        return None
    return Staged(baseline=planned, start=await _saved_snapshot(lab))


async def _saved_snapshot(lab: LiveLab) -> LabState:
    """Save the routers' configuration and snapshot every device, at once: saving changes no
    state a snapshot holds."""
    async with anyio.create_task_group() as group:
        group.start_soon(save_running_config, lab)
        state = await snapshot_lab(lab)
    return state
