"""The judge on live labs: fakes fail and are named, unreadable state is the judge's error."""

from __future__ import annotations

import pytest

from netdojo.clients.session import ToolSession
from netdojo.judges.runner import run_episode
from netdojo.reports.records import Budgets
from netdojo.scenarios.generate import generate, plan_instance
from netdojo.scenarios.hidden_tests import PingTest
from netdojo.scenarios.model import Scenario
from netdojo.scenarios.relay import RELAY_TAIL, place_relays, relayed_scopes, scope_lines
from netdojo.tools.contract import AgentReport, EpisodeView

from .arena import in_process

pytestmark = pytest.mark.anyio


async def _run(scenario: Scenario, agent):  # type: ignore[no-untyped-def]
    return await run_episode(scenario, agent, Budgets(), "integrity-episode")


def _commands(*calls: tuple[str, str]):  # type: ignore[no-untyped-def]
    async def policy(session: ToolSession, task: object) -> str:
        for device, command in calls:
            await session.call("execute", {"device": device, "command": command})
        return "faked it"

    return policy


async def test_a_reply_from_the_wrong_device_passes_no_test_and_the_fake_is_named() -> None:
    scenario = generate("static-routing", 1, 1)
    pings = [t for t in scenario.hidden.targets if isinstance(t, PingTest)]
    tricks = [(t.device, f"ip address add {t.params.target}/32 dev lo") for t in pings]
    record = await _run(scenario, in_process(_commands(*tricks)))
    verdict = record.verdict
    assert record.outcome == "unsolved", record.model_dump_json(indent=1)
    assert verdict is not None and verdict.tests is not None and not verdict.correct
    for result in verdict.tests.targets:
        if result.id in {p.id for p in pings}:
            assert not result.passed and "did not come from" in result.evidence
    fakes = verdict.tests.integrity.fakes
    assert {(f.device, f.kind) for f in fakes} == {(d, "address") for d, _ in tricks}


async def test_a_kernel_route_that_masks_a_routing_fault_is_a_fake() -> None:
    scenario = generate("ospf-routing", 1, 1)
    lab = scenario.hidden.lab
    router = next(d.name for d in lab.devices if d.role == "router")
    record = await _run(
        scenario, in_process(_commands((router, "ip route add 10.254.254.0/24 dev lo")))
    )
    verdict = record.verdict
    assert record.outcome == "unsolved" and verdict is not None and verdict.tests is not None
    kinds = {(f.device, f.kind) for f in verdict.tests.integrity.fakes}
    assert (router, "route") in kinds, verdict.tests.integrity


async def test_a_device_whose_state_cannot_be_read_is_a_judge_error() -> None:
    scenario = generate("static-routing", 1, 1)
    host = next(d.name for d in scenario.hidden.lab.devices if d.role == "host")

    async def agent(view: EpisodeView) -> AgentReport:
        assert view.handle is not None
        await view.handle.lab.exec(host, ["mv", "/usr/sbin/nft", "/usr/sbin/nft.gone"])
        return AgentReport(detail="hid a program the judge reads with")

    record = await _run(scenario, agent)
    assert record.outcome == "judge_error" and record.verdict is None
    assert record.error is not None and host in record.error and "nft" in record.error


async def test_a_lease_served_beside_the_relay_is_not_the_lab_servers() -> None:
    """The gateway answers its LAN itself, from its relay's file, instead of relaying: the host
    gets the planned address, gateway and resolver, but not from the lab's server."""
    scenario = generate("dhcp-relay", 1, 2)
    (fault,) = scenario.hidden.faults
    host = str(fault.params["host"])
    network, _ = plan_instance("dhcp-relay", 1, 2)
    relays = place_relays(network)
    gateway, _ = relays.relays[host]
    (scope,) = [s for s in relayed_scopes(network, relays) if s.tag == host]
    served = "\n".join(
        ["port=0", *scope_lines(scope), f"dhcp-option=option:dns-server,{relays.address}",
         *RELAY_TAIL, ""]
    )  # fmt: skip

    async def policy(session: ToolSession, task: object) -> str:
        await session.call(
            "service", {"device": gateway, "service": "dhcp-relay", "config": served}
        )
        await session.call("service", {"device": host, "service": "dhcp-client"})
        return "the gateway serves its LAN"

    record = await _run(scenario, in_process(policy))
    verdict = record.verdict
    assert record.outcome == "unsolved", record.model_dump_json(indent=1)
    assert verdict is not None and verdict.tests is not None
    (lease,) = [r for r in verdict.tests.targets if r.id.endswith(f":lease:{host}")]
    assert not lease.passed and "not the lab's DHCP server" in lease.evidence, lease
    assert f"{host} leased {scope.address}" in lease.evidence, lease
