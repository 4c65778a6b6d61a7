"""Grade a live lab: its hidden tests (targets, guards, adherence) and the state audit."""

from __future__ import annotations

import anyio
from pydantic import BaseModel, Field

from netdojo.judges.integrity import IntegrityReport, TaskRules, audit_state
from netdojo.judges.probes import ProbeResult, owners_of, run_probes
from netdojo.judges.snapshot import LabState, snapshot_lab
from netdojo.judges.staging import Staged
from netdojo.labs.runtime import LiveLab
from netdojo.scenarios.model import Scenario


class Grade(BaseModel):
    """Pass/fail per hidden test with its evidence; never the reference solution."""

    solved: bool = Field(
        description="every target passes, no guard or adherence check fails, nothing faked"
    )
    targets_passed: float = Field(description="the fraction of target tests that pass")
    targets: list[ProbeResult]
    guards: list[ProbeResult]
    adherence: list[ProbeResult]
    integrity: IntegrityReport = Field(
        default_factory=IntegrityReport, description="what the state audit found"
    )


async def grade(lab: LiveLab, scenario: Scenario, staged: Staged, rules: TaskRules) -> Grade:
    """Run every hidden test and, at the same time, audit every device's state."""
    hidden = scenario.hidden
    probes = hidden.targets + hidden.guards + hidden.adherence
    final: LabState = {}

    async def audit() -> None:
        final.update(await snapshot_lab(lab))

    async with anyio.create_task_group() as group:
        group.start_soon(audit)
        results = await run_probes(lab, probes, owners_of(scenario.public))
    integrity = audit_state(staged.baseline, staged.start, final, rules)
    n_targets, n_guards = len(hidden.targets), len(hidden.guards)
    targets = results[:n_targets]
    guards = results[n_targets : n_targets + n_guards]
    adherence = results[n_targets + n_guards :]
    passed = sum(r.passed for r in targets)
    return Grade(
        solved=all(r.passed for r in results) and not integrity.fakes,
        targets_passed=round(passed / n_targets, 4) if n_targets else 1.0,
        targets=targets,
        guards=guards,
        adherence=adherence,
        integrity=integrity,
    )
