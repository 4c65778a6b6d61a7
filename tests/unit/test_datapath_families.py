"""The data-plane families: every fault type drawn at every level, faults placed where the
forwarding model says their flows go, and path-MTU faults that do not undo each other."""

from __future__ import annotations

import random

import pytest

from netdojo.scenarios.faults import pmtu
from netdojo.scenarios.faults.base import FaultContext
from netdojo.scenarios.generate import generate
from netdojo.scenarios.network import plan_network
from netdojo.scenarios.registry import LEVELS, family
from netdojo.scenarios.topology import make_topology

FAMILIES = ("policy-routing", "path-mtu", "link-performance")


@pytest.mark.parametrize("name", FAMILIES)
@pytest.mark.parametrize("level", LEVELS)
def test_every_type_is_drawn_at_every_level(name: str, level: int) -> None:
    drawn = set()
    for seed in range(1, 41):
        drawn |= {f.type for f in generate(name, level, seed).hidden.faults}
    assert set(family(name).types) <= drawn


@pytest.mark.parametrize("name", FAMILIES)
def test_instances_repeat_and_the_brief_keeps_the_fault_hidden(name: str) -> None:
    for seed in range(1, 11):
        scenario = generate(name, 1, seed)
        assert scenario.model_dump_json() == generate(name, 1, seed).model_dump_json()
        brief = scenario.public.brief.lower()
        for word in ("ip rule", "table", "mtu", "icmp", "tc ", "qdisc", "tbf", "htb", "iptables"):
            assert word not in brief, brief


@pytest.mark.parametrize("name", ["path-mtu", "link-performance"])
def test_measured_faults_are_judged_by_measuring_the_flows_they_slow(name: str) -> None:
    for seed in range(1, 21):
        scenario = generate(name, 2, seed)
        if scenario.hidden.healthy:
            continue
        kinds = {t.kind for t in scenario.hidden.targets}
        assert kinds and kinds <= {"transfer", "throughput", "latency"}
        for fault in scenario.hidden.faults:
            if fault.red_herring:
                continue
            (present,) = fault.present
            assert present.params.expect is False and present.kind in kinds
            assert any(t.id == present.id for t in scenario.hidden.targets)


def test_a_policy_rule_is_present_by_its_priority_and_removed_by_the_fix() -> None:
    for seed in range(1, 21):
        for fault in generate("policy-routing", 1, seed).hidden.faults:
            if fault.red_herring:
                continue
            (present,) = fault.present
            assert present.kind == "ip_rule"
            priority = present.params.priority
            assert any(f"pref {priority}" in c.arguments["command"] for c in fault.inject)
            assert fault.fix[0].arguments["command"] == f"ip rule del pref {priority}"


def _chain_context() -> FaultContext:
    """Four routers in a chain, a host at each end."""
    rng = random.Random(7)
    network = plan_network(make_topology("chain", 4, 7), 1, rng)
    return FaultContext(network=network, routing="ospf", rng=rng)


def test_a_narrow_link_whose_messages_get_through_first_saves_a_later_one() -> None:
    ctx = _chain_context()
    a, b = sorted(ctx.network.lans)
    (path,) = ctx.courses[a, b].paths
    first, second = (path[0], path[1]), (path[1], path[2])
    silent_second = {f"pmtu:narrow:{second[0]}:{second[1]}:1400", f"pmtu:silent:{second[0]}"}
    assert pmtu._stalls(ctx, silent_second, (a, b))
    assert not pmtu._stalls(ctx, silent_second, (b, a)), "the other way it is not the near end"
    narrower_first = silent_second | {f"pmtu:narrow:{first[0]}:{first[1]}:1280"}
    assert not pmtu._stalls(ctx, narrower_first, (a, b)), "learnt 1280 before the filter"
    wider_first = silent_second | {f"pmtu:narrow:{first[0]}:{first[1]}:1450"}
    assert pmtu._stalls(ctx, wider_first, (a, b)), "1450 learnt, 1400 still silent"
    guarded = {f"pmtu:narrow:{second[0]}:{second[1]}:1400"}
    guarded.add(f"pmtu:guard:{ctx.network.router_of(a)}:{ctx.network.lans[a]}")
    assert pmtu._stalls(ctx, guarded, (a, b))
