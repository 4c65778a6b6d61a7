"""Episodes judged on live labs: outcomes, safety monitoring, budgets, and a clean teardown."""

from __future__ import annotations

import anyio
import pytest

from netdojo.clients.agents import noop, oracle, vandal
from netdojo.clients.session import ToolCallError, ToolSession
from netdojo.judges import runner
from netdojo.judges.monitor import CONSECUTIVE_FAILURES, SAMPLE_EVERY_S, FlowMonitor
from netdojo.judges.runner import run_episode
from netdojo.labs.runtime import LiveLab
from netdojo.reports.records import Budgets
from netdojo.scenarios.generate import generate
from netdojo.scenarios.hidden_tests import HiddenTest
from netdojo.tools.contract import AgentReport, EpisodeView

from .arena import in_process

pytestmark = pytest.mark.anyio
SCENARIO = ("ospf-adjacency", 1, 26)  # has a protected flow and adjacency guards


async def _run(agent, budgets: Budgets | None = None, calibration: bool = False):  # type: ignore[no-untyped-def]
    scenario = generate(*SCENARIO)
    return await run_episode(
        scenario, agent, budgets or Budgets(), "test-episode", calibration=calibration
    )


async def test_doing_nothing_is_unsolved_and_safe() -> None:
    record = await _run(in_process(noop))
    verdict = record.verdict
    assert record.outcome == "unsolved" and verdict is not None
    assert (
        not verdict.correct
        and verdict.safety.safe
        and verdict.safety.outages.flows == len(generate(*SCENARIO).hidden.guards)
    )
    assert verdict.effort.tool_calls == 1 and verdict.effort.state_changing_calls == 0
    assert all(r.evidence for r in verdict.tests.targets)
    assert record.timings.ready_s > 0 and record.timings.teardown_s > 0


async def test_the_reference_solution_is_solved_and_safe() -> None:
    record = await _run(in_process(oracle), calibration=True)
    assert record.outcome == "solved", record.model_dump_json(indent=1)
    assert record.verdict.correct and record.verdict.targets_passed == 1.0
    assert record.verdict.safety.out_of_scope_changes == 0


async def test_a_vandal_is_unsafe() -> None:
    record = await _run(in_process(vandal))
    safety = record.verdict.safety
    assert record.outcome == "unsafe"
    assert safety.guards_failed or safety.outages.outages


async def _samples(monitor: FlowMonitor, more: int) -> None:
    """Wait until ``monitor`` has taken ``more`` samples beyond those taken so far."""
    wanted = monitor.report.samples + more
    while monitor.report.samples < wanted:
        await anyio.sleep(0.1)


async def test_an_outage_the_agent_repairs_in_time_is_still_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The flaky agent drops its flow's pings until the judge's monitor has sampled the drop
    as many times in a row as an outage takes, then puts them back and waits for a sample of
    the repair: the outage is seen however slowly the machine runs."""
    flow = next(g for g in generate(*SCENARIO).hidden.guards if g.kind == "ping")
    rule = "OUTPUT -p icmp -j DROP"
    in_a_row = CONSECUTIVE_FAILURES["cheap"]
    monitors: list[FlowMonitor] = []

    class Watched(FlowMonitor):
        def __init__(self, lab: LiveLab, guards: list[HiddenTest]) -> None:
            super().__init__(lab, guards)
            monitors.append(self)

    monkeypatch.setattr(runner, "FlowMonitor", Watched)

    async def flaky(session: ToolSession, task: object) -> str:
        await session.call("execute", {"device": flow.device, "command": f"iptables -A {rule}"})
        # The next sample may have begun before the rule; the ones after it began after.
        await _samples(monitors[0], 1 + in_a_row)
        await session.call("execute", {"device": flow.device, "command": f"iptables -D {rule}"})
        await _samples(monitors[0], 2)  # one sample begun after the repair
        return "dropped pings for a while"

    record = await _run(in_process(flaky))
    safety = record.verdict.safety
    assert record.outcome == "unsafe" and not safety.guards_failed, "all fine at the end"
    assert [o.probe for o in safety.outages.outages] == [flow.id], safety.outages
    # Samples begin at least SAMPLE_EVERY_S apart: from the first failing one to the one that
    # closed the outage, at least `in_a_row` intervals.
    outage = safety.outages.outages[0]
    assert outage.lasted_s >= in_a_row * SAMPLE_EVERY_S, outage


async def test_a_crashing_agent_is_an_agent_error_and_the_lab_goes() -> None:
    async def crash(view: EpisodeView) -> AgentReport:
        raise RuntimeError("purple agent exploded")

    record = await _run(crash)
    assert record.outcome == "agent_error" and "exploded" in record.verdict.detail


async def test_an_agent_past_its_time_budget_times_out() -> None:
    async def hang(view: EpisodeView) -> AgentReport:
        await anyio.sleep_forever()
        return AgentReport()

    record = await _run(hang, Budgets(time_budget_s=2))
    assert record.outcome == "timeout" and 2 <= record.timings.agent_s < 10


async def test_tool_calls_beyond_the_budget_are_refused() -> None:
    refused: list[str] = []

    async def chatty(session: ToolSession, task: object) -> str:
        for _ in range(3):
            try:
                await session.call("topology")
            except ToolCallError as exc:
                refused.append(str(exc))
        return "looked around"

    record = await _run(in_process(chatty), Budgets(max_tool_calls=2))
    assert len(refused) == 1 and "budget of 2 tool calls" in refused[0]
    assert record.outcome == "unsolved"
