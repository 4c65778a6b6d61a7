"""Grade a live lab against a scenario's hidden tests: targets, guards and adherence checks."""

from __future__ import annotations

from pydantic import BaseModel, Field

from netdojo.judges.probes import ProbeResult, run_probes
from netdojo.labs.runtime import LiveLab
from netdojo.scenarios.model import HiddenHalf


class Grade(BaseModel):
    """Pass/fail per hidden test with its evidence; never the reference solution."""

    solved: bool = Field(description="every target passes and no guard or adherence check fails")
    targets_passed: float = Field(description="the fraction of target tests that pass")
    targets: list[ProbeResult]
    guards: list[ProbeResult]
    adherence: list[ProbeResult]


async def grade(lab: LiveLab, hidden: HiddenHalf) -> Grade:
    probes = hidden.targets + hidden.guards + hidden.adherence
    results = await run_probes(lab, probes)
    n_targets, n_guards = len(hidden.targets), len(hidden.guards)
    targets = results[:n_targets]
    guards = results[n_targets : n_targets + n_guards]
    adherence = results[n_targets + n_guards :]
    passed = sum(r.passed for r in targets)
    return Grade(
        solved=all(r.passed for r in results),
        targets_passed=round(passed / n_targets, 4) if n_targets else 1.0,
        targets=targets,
        guards=guards,
        adherence=adherence,
    )
