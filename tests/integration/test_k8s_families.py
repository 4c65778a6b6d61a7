"""The Kubernetes policy families on live labs: a repair worked through practice mode with the
real `kubectl`, graded before and after.

Both families are audited and run against the cheater with every other family
(`test_every_family.py`); here a noop and a vandal episode pin what they get.
"""

from __future__ import annotations

import secrets
from typing import Any

import anyio
import pytest
from mcp import Client

from netdojo.clients.agents import Policy, noop, vandal
from netdojo.judges.runner import run_episode
from netdojo.reports.records import Budgets
from netdojo.scenarios.generate import generate
from netdojo.scenarios.healthy import is_healthy_control
from netdojo.scenarios.hidden_tests import TcpTest, UdpTest
from netdojo.scenarios.model import Scenario
from netdojo.servers.mcp_server import practice_server
from netdojo.servers.practice import PracticeSession

from .arena import in_process

pytestmark = pytest.mark.anyio
REPAIR = "k8s-policy-repair"


def _faulted_with_a_working_flow() -> Scenario:
    """A faulted instance with an open flow among its guards. A healthy control is solved by
    doing nothing, and a default deny added to every namespace leaves no flow open that
    isolating the pods could break (the vandal is then unsolved, not unsafe)."""
    while True:
        scenario = generate(REPAIR, 1, 1 + secrets.randbelow(10_000))
        hidden = scenario.hidden
        if not hidden.healthy and any(
            isinstance(guard, TcpTest | UdpTest) and guard.params.expect for guard in hidden.guards
        ):
            return scenario


@pytest.mark.parametrize(("agent", "outcome"), [(noop, "unsolved"), (vandal, "unsafe")])
async def test_doing_nothing_is_unsolved_and_isolating_every_pod_is_unsafe(
    agent: Policy, outcome: str
) -> None:
    scenario = _faulted_with_a_working_flow()
    record = await run_episode(
        scenario, in_process(agent), Budgets(), f"episode-{secrets.token_hex(6)}"
    )
    assert record.outcome == outcome, (record.error, record.verdict)


async def _grade(client: Client) -> dict[str, Any]:
    return dict((await client.call_tool("grade", {})).structured_content or {})


async def test_practice_repairs_a_policy_with_the_real_kubectl() -> None:
    while is_healthy_control(REPAIR, 1, seed := 1 + secrets.randbelow(10_000)):
        pass
    scenario = generate(REPAIR, 1, seed)
    session = PracticeSession()
    try:
        async with Client(practice_server(session)) as client:
            started = await client.call_tool(
                "start_scenario", {"family": REPAIR, "level": 1, "seed": seed}
            )
            assert not started.is_error, started.content
            refused = await client.call_tool("execute", {"device": "x", "command": "true"})
            assert refused.is_error and "does not offer execute" in str(refused.content)
            listed = await client.call_tool("kubectl", {"command": "get networkpolicies -A"})
            assert listed.structured_content["ok"], listed.content
            assert not (await _grade(client))["solved"]
            for call in scenario.hidden.solution:
                done = await client.call_tool(call.tool, call.arguments)
                assert done.structured_content["ok"], done.content
            after: dict[str, Any] = {}
            with anyio.move_on_after(20):
                while not (after := await _grade(client))["solved"]:
                    await anyio.sleep(0.5)
            assert after["solved"], after
    finally:
        await session.end()
