"""Healthy controls and diagnosis-only episodes, end to end on live labs.

A healthy control is audited clean, solved by the oracle (which changes nothing and says
nothing is wrong) and made unsafe by a vandal; a diagnosis-only episode offers read-only tools,
is solved by the oracle's exact diagnosis and by the heuristic's (which finds the missing route
without changing it), and leaves a vandal unable to change anything.
"""

from __future__ import annotations

from typing import Any

import pytest

from netdojo.clients.agents import oracle, vandal
from netdojo.clients.catalogue import policy_factory
from netdojo.clients.session import ToolSession
from netdojo.judges.audit import audit_instance
from netdojo.judges.runner import run_episode
from netdojo.reports.records import Budgets, EpisodeRecord, Task
from netdojo.reports.summary import summarize
from netdojo.scenarios.generate import generate
from netdojo.tools.contract import EpisodeView

from .arena import in_process

pytestmark = pytest.mark.anyio
HEALTHY = ("static-routing", 1, 7)  # a healthy control (scenarios.healthy)
FAULTED = ("static-routing", 1, 1)  # static.missing_route on one router


async def _run(instance: tuple[str, int, int], policy: Any, task: Task = "repair") -> EpisodeRecord:
    scenario = generate(*instance)
    agent = in_process(policy)
    return await run_episode(scenario, agent, Budgets(), "test-diag", calibration=True, task=task)


async def test_a_healthy_control_audits_clean_with_nothing_injected() -> None:
    assert generate(*HEALTHY).hidden.healthy
    audited = await audit_instance(*HEALTHY)
    assert audited.ok and audited.healthy, audited.model_dump_json(indent=1)
    assert "inject" not in audited.stages and "fault_active" not in audited.stages


async def test_on_a_healthy_control_the_oracle_is_solved_and_the_vandal_unsafe() -> None:
    calm = await _run(HEALTHY, oracle)
    assert calm.outcome == "solved", calm.model_dump_json(indent=1)
    assert calm.healthy and calm.false_alarm is False
    assert calm.diagnosis is not None and calm.diagnosis.exact
    assert calm.diagnosis.true_classes == ["none"] and calm.verdict is not None
    assert calm.verdict.effort.state_changing_calls == 0

    wrecked = await _run(HEALTHY, vandal)
    assert wrecked.outcome == "unsafe" and wrecked.false_alarm is True
    assert wrecked.verdict is not None and wrecked.verdict.safety.healthy_changes > 0

    heuristic = policy_factory("heuristic")()
    careful = await _run(HEALTHY, heuristic)
    assert careful.outcome == "solved" and careful.false_alarm is False, careful.verdict

    summary = summarize([calm, wrecked, careful])
    assert summary.healthy_controls == 3 and summary.false_alarms is not None
    assert summary.false_alarms.value == pytest.approx(1 / 3)


async def test_a_diagnosis_only_episode_offers_read_only_tools_and_judges_the_diagnosis() -> None:
    offered: list[set[str]] = []

    async def looking_oracle(session: ToolSession, task: EpisodeView) -> str:
        offered.append({tool.name for tool in await session.list_tools()})
        return await oracle(session, task)

    exact = await _run(FAULTED, looking_oracle, task="diagnose")
    assert offered and not {"configure", "execute"} & offered[0] and "submit" in offered[0]
    assert exact.outcome == "solved", exact.model_dump_json(indent=1)
    assert exact.diagnosis is not None and exact.diagnosis.exact
    assert exact.diagnosis.true_classes == ["static_route"]
    assert exact.verdict is not None and exact.verdict.effort.state_changing_calls == 0
    assert exact.verdict.targets_passed < 1.0  # the fault is left in place

    wrecked = await _run(FAULTED, vandal, task="diagnose")
    assert wrecked.outcome == "unsolved" and wrecked.verdict is not None
    assert wrecked.verdict.safety.safe and wrecked.verdict.effort.state_changing_calls == 0
    assert wrecked.diagnosis is not None and not wrecked.diagnosis.submitted

    heuristic = policy_factory("heuristic")()
    looked = await _run(FAULTED, heuristic, task="diagnose")
    assert looked.verdict is not None and looked.verdict.effort.state_changing_calls == 0
    assert looked.diagnosis is not None and looked.diagnosis.submitted, looked.verdict.detail
    assert looked.outcome == "solved" and looked.diagnosis.exact, looked.diagnosis

    summary = summarize([exact, wrecked, looked])
    assert summary.localisation is not None and summary.localisation.f1.n == 3
    assert summary.root_cause is not None
