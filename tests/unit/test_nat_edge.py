"""The nat-edge family: its plan keeps the outside ignorant of the inside, every fault type is
drawn at every level, each fault breaks a flow of its own, and the brief hides the fault."""

from __future__ import annotations

import ipaddress
import random
import re

import pytest

from netdojo.clients.heuristic.fixes_nat import parse_design
from netdojo.scenarios.faults.nat import FAULTS
from netdojo.scenarios.generate import generate
from netdojo.scenarios.model import ToolCall
from netdojo.scenarios.nat_edge import flows, plan_edge, render, static_plan
from netdojo.scenarios.nat_task import _own
from netdojo.scenarios.registry import LEVELS, family

NAME = "nat-edge"


@pytest.mark.parametrize("level", LEVELS)
def test_every_type_is_drawn_at_every_level(level: int) -> None:
    drawn = set()
    for seed in range(1, 61):
        drawn |= {f.type for f in generate(NAME, level, seed).hidden.faults}
    assert set(family(NAME).types) == drawn == set(FAULTS)


def test_instances_repeat_and_the_brief_keeps_the_fault_hidden() -> None:
    words = ("iptables", "nft", "masquerade", "snat", "dnat", "conntrack", "spare", "priority")
    for level in LEVELS:
        for seed in range(1, 16):
            scenario = generate(NAME, level, seed)
            assert scenario.model_dump_json() == generate(NAME, level, seed).model_dump_json()
            brief = scenario.public.brief.lower()
            assert not any(word in brief for word in words), brief
            assert scenario.public.constraints[0] in scenario.public.brief


@pytest.mark.parametrize("level", LEVELS)
def test_outside_routers_have_no_route_to_the_inside(level: int) -> None:
    for seed in range(10):
        plan = plan_edge(level, random.Random(seed))
        inside = ipaddress.ip_network(plan.aggregate)
        routes = static_plan(plan)
        for router in plan.outside:
            for prefix, _ in routes[router]:
                assert not ipaddress.ip_network(prefix).overlaps(inside), (router, prefix)
        for router in plan.inside:
            assert ("0.0.0.0/0", routes[router][0][1]) in routes[router]
        lab = render(plan, "nat1")
        startup = " ".join(lab.device(plan.edge).startup)
        assert plan.snat_rule() in startup and plan.dnat_rule() in startup
        assert ipaddress.ip_address(plan.public) not in inside


def test_faults_break_flows_of_their_own_and_the_fix_undoes_the_injection() -> None:
    for level in LEVELS:
        for seed in range(1, 31):
            scenario = generate(NAME, level, seed)
            hidden = scenario.hidden
            if hidden.healthy:  # a control has no fault (tests/unit/test_healthy_controls.py)
                continue
            assert hidden.targets
            ids = {t.id for t in hidden.targets} | {t.id for t in hidden.guards}
            assert not {t.id for t in hidden.targets} & {t.id for t in hidden.guards}
            assert len(ids) == len(hidden.targets) + len(hidden.guards)
            for fault in hidden.faults:
                assert fault.present and fault.fix
                assert _undone(fault.inject) == {_call(c) for c in fault.fix}


def _call(call: ToolCall) -> str:
    return str(call.arguments.get("command") or call.arguments["lines"][0])


def _undone(inject: list[ToolCall]) -> set[str]:
    """What undoes each injection call: an iptables rule deleted or added back, a route
    withdrawn, an nftables table deleted."""
    undone = set()
    for call in inject:
        text = _call(call)
        if text.startswith("iptables"):
            swap = {"-D": "-A", "-A": "-D"}
            undone.add(" ".join(swap.get(word, word) for word in text.split()))
        elif text.startswith("ip route"):
            undone.add(f"no {text}")
        elif text.startswith("nft add table"):
            undone.add(text.replace("nft add table", "nft delete table"))
    return undone


def test_two_faults_never_share_a_slot_and_each_keeps_a_symptom() -> None:
    for seed in range(40):
        rng = random.Random(seed)
        plan = plan_edge(3, rng)
        drawn = [FAULTS[kind](plan, rng, kind) for kind in sorted(FAULTS)]
        every = {t.id for t in flows(plan)}
        for found in drawn:
            assert found is not None and found.breaks and found.breaks <= every
            assert _own(found, [found]) == found.breaks


def test_the_heuristic_agent_reads_the_design_every_brief_states() -> None:
    for level in LEVELS:
        for seed in range(1, 21):
            scenario = generate(NAME, level, seed)
            design = parse_design(scenario.public.brief)
            faults = scenario.hidden.faults
            edges = {f.device for f in faults if f.type != "nat.asymmetric_return"}
            assert design is not None
            assert edges <= {design.edge}
            assert design.server in scenario.public.brief
            assert re.search(rf"TCP (port )?{design.port}\b", scenario.public.brief)
