"""The live audit of a scenario instance: is its fault real, and does its reference fix work?

Per instance, on a fresh lab. Reactive: the baseline passes every target and guard test; after
the faults are injected (through the tools an agent uses) each fault is present, every symptom
in the brief is real and the guards still hold. Constructive: the guards pass and every target
fails on the initial state. Both: after the reference solution, applied through the same tools,
every target, guard and adherence test passes.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import anyio
from pydantic import BaseModel, Field

from netdojo.judges.probes import ProbeResult, run_probes
from netdojo.labs.runtime import LiveLab, deploy_lab
from netdojo.scenarios.families import generate
from netdojo.scenarios.model import HiddenHalf, Probe, Scenario, ToolCall
from netdojo.tools.actions import apply

BASELINE_DEADLINE_S = 90.0
FAULT_DEADLINE_S = 30.0
FIX_DEADLINE_S = 45.0
POLL_S = 0.5


class StageResult(BaseModel):
    ok: bool
    seconds: float
    detail: str = ""
    failed: list[ProbeResult] = Field(default_factory=list)


class AuditRecord(BaseModel):
    id: str
    family: str
    level: int
    seed: int
    ok: bool
    stages: dict[str, StageResult] = Field(default_factory=dict)
    seconds: float = 0.0
    error: str | None = None


Condition = Callable[[list[ProbeResult]], bool]


async def _poll(
    lab: LiveLab, probes: list[Probe], holds: Condition, deadline: float
) -> StageResult:
    started = time.monotonic()
    results: list[ProbeResult] = []
    while True:
        results = await run_probes(lab, probes)
        if holds(results):
            return StageResult(ok=True, seconds=round(time.monotonic() - started, 2))
        if time.monotonic() - started > deadline:
            break
        await anyio.sleep(POLL_S)
    return StageResult(
        ok=False,
        seconds=round(time.monotonic() - started, 2),
        detail=f"not reached within {deadline:.0f}s",
        failed=[r for r in results if not r.passed],
    )


async def _apply_all(lab: LiveLab, calls: list[ToolCall]) -> StageResult:
    started = time.monotonic()
    for call in calls:
        result = await apply(lab, call)
        if not result.ok:
            detail = result.model_dump_json(exclude_defaults=True)
            return StageResult(ok=False, seconds=time.monotonic() - started, detail=detail)
    return StageResult(ok=True, seconds=round(time.monotonic() - started, 2))


def _all_pass(results: list[ProbeResult]) -> bool:
    return all(r.passed for r in results)


def _none_pass(results: list[ProbeResult]) -> bool:
    return not any(r.passed for r in results)


def _fault_active(n_present: int, n_symptoms: int, n_guards: int) -> Condition:
    """Faults present, every symptom real, guards intact, and some target failing."""

    def holds(results: list[ProbeResult]) -> bool:
        present = results[:n_present]
        symptoms = results[n_present : n_present + n_symptoms]
        guards = results[n_present + n_symptoms : n_present + n_symptoms + n_guards]
        others = results[n_present + n_symptoms + n_guards :]
        some_target_fails = bool(symptoms) or not _all_pass(others)
        return (
            _all_pass(present)
            and not any(r.passed for r in symptoms)
            and _all_pass(guards)
            and some_target_fails
        )

    return holds


async def _stage(record: AuditRecord, name: str, result: Awaitable[StageResult]) -> bool:
    record.stages[name] = await result
    return record.stages[name].ok


async def _solve(lab: LiveLab, hidden: HiddenHalf, record: AuditRecord) -> None:
    """Apply the reference solution; then every target, guard and adherence test must pass."""
    if await _stage(record, "solve", _apply_all(lab, hidden.solution)):
        everything = hidden.targets + hidden.guards + hidden.adherence
        await _stage(record, "fixed", _poll(lab, everything, _all_pass, FIX_DEADLINE_S))


async def _constructive_stages(scenario: Scenario, lab: LiveLab, record: AuditRecord) -> None:
    hidden = scenario.hidden
    if not await _stage(
        record, "baseline", _poll(lab, hidden.guards, _all_pass, BASELINE_DEADLINE_S)
    ):
        return
    if await _stage(record, "unsolved", _poll(lab, hidden.targets, _none_pass, 0)):
        await _solve(lab, hidden, record)


async def _reactive_stages(scenario: Scenario, lab: LiveLab, record: AuditRecord) -> None:
    hidden = scenario.hidden
    present = [p for f in hidden.faults for p in f.present]
    symptoms = [p for p in hidden.targets if p.kind == "ping"]
    others = [p for p in hidden.targets if p.kind != "ping"]
    baseline = _poll(lab, hidden.targets + hidden.guards, _all_pass, BASELINE_DEADLINE_S)
    if not await _stage(record, "baseline", baseline):
        return
    if not await _stage(
        record, "inject", _apply_all(lab, [c for f in hidden.faults for c in f.inject])
    ):
        return
    active = _fault_active(len(present), len(symptoms), len(hidden.guards))
    probes = present + symptoms + hidden.guards + others
    if await _stage(record, "fault_active", _poll(lab, probes, active, FAULT_DEADLINE_S)):
        await _solve(lab, hidden, record)


async def audit_instance(family: str, level: int, seed: int) -> AuditRecord:
    started = time.monotonic()
    record = AuditRecord(id="", family=family, level=level, seed=seed, ok=False)
    try:
        scenario = generate(family, level, seed)
        record.id = scenario.id
        deploy_started = time.monotonic()
        async with deploy_lab(scenario.hidden.lab) as lab:
            record.stages["deploy"] = StageResult(
                ok=True, seconds=round(time.monotonic() - deploy_started, 2)
            )
            if scenario.kind == "reactive":
                await _reactive_stages(scenario, lab, record)
            else:
                await _constructive_stages(scenario, lab, record)
        stages = record.stages
        record.ok = "fixed" in stages and all(s.ok for s in stages.values())
    except Exception as exc:  # one broken instance is a failed record; the audit goes on
        record.error = f"{type(exc).__name__}: {exc}"
    record.seconds = round(time.monotonic() - started, 2)
    return record
