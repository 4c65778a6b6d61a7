"""The live audit of a scenario instance: is its fault real, and does its reference fix work?

Per instance, on a fresh lab: the lab is staged as for an episode (see `staging`), then the
reference solution, applied through the same tools an agent uses, must make every target,
guard and adherence test pass, and the state audit must find in it no fake and no change
outside the task's scope. A healthy control has nothing to inject and an empty solution: its
guards must hold and the state audit find nothing.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from pydantic import BaseModel, Field

from netdojo.errors import describe
from netdojo.judges.checks import owners_of
from netdojo.judges.grading import grade
from netdojo.judges.integrity import rules_for
from netdojo.judges.staging import (
    Staged,
    StageResult,
    all_pass,
    apply_all,
    none_pass,
    poll,
    stage_scenario,
)
from netdojo.labs.runtime import LiveLab, deploy_lab
from netdojo.reports.records import HiddenTestResult
from netdojo.scenarios.generate import generate
from netdojo.scenarios.model import Scenario, ToolCall

FIX_DEADLINE_S = 45.0

Examine = Callable[[LiveLab, Scenario], Awaitable[None]]
"""Looks at a staged lab, as an agent first finds it, before the reference solution runs."""


class AuditRecord(BaseModel):
    id: str
    family: str
    level: int
    seed: int
    healthy: bool = False
    cascade: bool = False
    ok: bool
    stages: dict[str, StageResult] = Field(default_factory=dict)
    seconds: float = 0.0
    error: str | None = None


async def _solve(lab: LiveLab, scenario: Scenario, staged: Staged, record: AuditRecord) -> None:
    """Apply the reference solution; then every target, guard and adherence test must pass,
    and the state audit must find nothing wrong with how it got there."""
    hidden = scenario.hidden
    solution = hidden.solution
    if hidden.cascade is not None:
        first = len(hidden.faults[hidden.cascade.masking].fix)
        if not await _unmask(lab, scenario, solution[:first], record):
            return
        solution = solution[first:]
    record.stages["solve"] = await apply_all(lab, solution)
    if not record.stages["solve"].ok:
        return
    everything = hidden.targets + hidden.guards + hidden.adherence
    owners = owners_of(scenario.public)
    record.stages["fixed"] = await poll(lab, everything, all_pass, FIX_DEADLINE_S, owners)
    if record.stages["fixed"].ok:
        started = time.monotonic()
        found = (await grade(lab, scenario, staged, rules_for(scenario))).integrity
        wrong = [f"{d.device}: {d.detail} ({d.evidence})" for d in found.fakes + found.unexplained]
        record.stages["integrity"] = StageResult(
            ok=not wrong,
            seconds=round(time.monotonic() - started, 2),
            detail="; ".join(wrong) or f"{found.changes} changes, all explained",
        )


async def _unmask(
    lab: LiveLab, scenario: Scenario, repair: list[ToolCall], record: AuditRecord
) -> bool:
    """A cascade: repair the masking fault alone (the solution's first calls); then the masked
    fault must be present still, the pairs it breaks must fail and the pairs only the masking
    fault broke must work again."""
    hidden = scenario.hidden
    cascade = hidden.cascade
    assert cascade is not None
    record.stages["unmask"] = await apply_all(lab, repair)
    if not record.stages["unmask"].ok:
        return False
    present = hidden.faults[cascade.masked].present
    targets = {test.id: test for test in hidden.targets}
    masked = [targets[f"target:ping:{a}-{b}"] for a, b in cascade.pairs]
    revived = [targets[f"target:ping:{a}-{b}"] for a, b in cascade.revived]

    def holds(results: list[HiddenTestResult]) -> bool:
        n = len(present)
        later = results[n + len(masked) :]
        return all_pass(results[:n]) and none_pass(results[n : n + len(masked)]) and all_pass(later)

    tests = [*present, *masked, *revived]
    owners = owners_of(scenario.public)
    record.stages["unmasked"] = await poll(lab, tests, holds, FIX_DEADLINE_S, owners)
    return record.stages["unmasked"].ok


async def audit_instance(
    family: str, level: int, seed: int, examine: Examine | None = None
) -> AuditRecord:
    """Audit one instance; ``examine`` is given the staged lab first (its error fails the
    record)."""
    started = time.monotonic()
    record = AuditRecord(id="", family=family, level=level, seed=seed, ok=False)
    try:
        scenario = generate(family, level, seed)
        record.id = scenario.id
        record.healthy = scenario.hidden.healthy
        record.cascade = scenario.hidden.cascade is not None
        deploy_started = time.monotonic()
        async with deploy_lab(scenario.hidden.lab) as lab:
            record.stages["deploy"] = StageResult(
                ok=True, seconds=round(time.monotonic() - deploy_started, 2)
            )
            staged = await stage_scenario(scenario, lab, record.stages, witnessed=True)
            if staged is not None:
                if examine is not None:
                    await examine(lab, scenario)
                await _solve(lab, scenario, staged, record)
        stages = record.stages
        record.ok = "fixed" in stages and all(s.ok for s in stages.values())
    except Exception as exc:  # one broken instance is a failed record; the audit goes on
        record.error = describe(exc)
    record.seconds = round(time.monotonic() - started, 2)
    return record
