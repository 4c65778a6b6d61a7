"""Grade a live lab: its hidden tests (targets, guards, adherence) and the state audit."""

from __future__ import annotations

import anyio

from netdojo.judges.checks import JudgeError, owners_of, run_tests
from netdojo.judges.integrity import TaskRules, audit_state
from netdojo.judges.snapshot import LabState, snapshot_lab
from netdojo.judges.staging import Staged
from netdojo.labs.runtime import LiveLab
from netdojo.reports.records import Grade
from netdojo.scenarios.model import Scenario

ENFORCED_WAIT_S = 15.0


async def enforced(lab: LiveLab) -> None:
    """On a Kubernetes lab, wait until the NetworkPolicy enforcer has finished a round begun
    now, so the live probes see every policy the agent left, however loaded the machine;
    `JudgeError` when it does not within `ENFORCED_WAIT_S`."""
    cluster = lab.cluster
    if cluster is None or cluster.enforcer is None:
        return
    enforcer = cluster.enforcer
    if not await anyio.to_thread.run_sync(enforcer.wait_round, ENFORCED_WAIT_S):
        last = enforcer.errors[-1] if enforcer.errors else "no error reported"
        raise JudgeError(
            f"the NetworkPolicy enforcer finished no round in {ENFORCED_WAIT_S:.0f}s ({last})"
        )


async def grade(lab: LiveLab, scenario: Scenario, staged: Staged, rules: TaskRules) -> Grade:
    """Run every hidden test and, at the same time, audit every device's state."""
    await enforced(lab)
    hidden = scenario.hidden
    tests = hidden.targets + hidden.guards + hidden.adherence
    final: LabState = {}

    async def audit() -> None:
        final.update(await snapshot_lab(lab))

    async with anyio.create_task_group() as group:
        group.start_soon(audit)
        results = await run_tests(lab, tests, owners_of(scenario.public))
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
