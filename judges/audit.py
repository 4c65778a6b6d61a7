"""The live audit of a scenario instance: is its fault real, and does its reference fix work?

Per instance, on a fresh lab: the lab is staged as for an episode (see `staging`), then the
reference solution, applied through the same tools an agent uses, must make every target,
guard and adherence test pass, and the state audit must find in it no fake and no change
outside the task's scope. A healthy control has nothing to inject and an empty solution: its
guards must hold and the state audit find nothing.
"""

from __future__ import annotations

import time

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
    poll,
    stage_scenario,
)
from netdojo.labs.runtime import LiveLab, deploy_lab
from netdojo.scenarios.generate import generate
from netdojo.scenarios.model import Scenario

FIX_DEADLINE_S = 45.0


class AuditRecord(BaseModel):
    id: str
    family: str
    level: int
    seed: int
    healthy: bool = False
    ok: bool
    stages: dict[str, StageResult] = Field(default_factory=dict)
    seconds: float = 0.0
    error: str | None = None


async def _solve(lab: LiveLab, scenario: Scenario, staged: Staged, record: AuditRecord) -> None:
    """Apply the reference solution; then every target, guard and adherence test must pass,
    and the state audit must find nothing wrong with how it got there."""
    hidden = scenario.hidden
    record.stages["solve"] = await apply_all(lab, hidden.solution)
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


async def audit_instance(family: str, level: int, seed: int) -> AuditRecord:
    started = time.monotonic()
    record = AuditRecord(id="", family=family, level=level, seed=seed, ok=False)
    try:
        scenario = generate(family, level, seed)
        record.id = scenario.id
        record.healthy = scenario.hidden.healthy
        deploy_started = time.monotonic()
        async with deploy_lab(scenario.hidden.lab) as lab:
            record.stages["deploy"] = StageResult(
                ok=True, seconds=round(time.monotonic() - deploy_started, 2)
            )
            staged = await stage_scenario(scenario, lab, record.stages, witnessed=True)
            if staged is not None:
                await _solve(lab, scenario, staged, record)
        stages = record.stages
        record.ok = "fixed" in stages and all(s.ok for s in stages.values())
    except Exception as exc:  # one broken instance is a failed record; the audit goes on
        record.error = describe(exc)
    record.seconds = round(time.monotonic() - started, 2)
    return record
