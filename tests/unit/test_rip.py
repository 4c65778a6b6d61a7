"""RIP: configuration, the planner's hop bound, the forwarding model and the fault catalogue."""

from __future__ import annotations

import random

import pytest

from netdojo.scenarios import registry
from netdojo.scenarios.forwarding import Forwarding, Impact
from netdojo.scenarios.generate import generate, plan_instance
from netdojo.scenarios.network import plan_network, router_config
from netdojo.scenarios.registry import LEVELS
from netdojo.scenarios.rip import TIMERS, rip_lines
from netdojo.scenarios.rip_plan import MAX_HOPS, hop_span
from netdojo.scenarios.topology import make_topology


def _ring(n: int) -> tuple[Forwarding, list[str]]:
    topology = make_topology("ring", n, 3)
    network = plan_network(topology, 1, random.Random(1), host_routers=topology.routers)
    return Forwarding(network, "rip"), topology.routers


def test_every_port_and_the_loopback_run_ripv2_with_host_ports_passive() -> None:
    network, _ = plan_instance("rip-routing", 2, 4)
    for router in network.routers:
        lines = rip_lines(network, router)
        assert {" version 2", f" {TIMERS}", " allow-ecmp"} <= set(lines)
        assert f" network {router.loopback}/32" in lines
        for iface in router.ifaces:
            host = network.node(iface.peer).role == "host"
            assert (f" passive-interface {iface.name}" in lines) == host
        config = router_config(network, router, "rip", {})
        assert "router rip" in config and "router ospf" not in config
    md5 = " ip rip authentication mode md5"
    authenticated = [r for r in network.routers if md5 in rip_lines(network, r)]
    assert len(authenticated) == 2 and network.rip_auth and not network.ospf_md5


def test_the_build_authenticates_nothing_and_runs_ripd() -> None:
    scenario = generate("rip-build", 1, 2)
    configs = [d.files["/etc/frr/frr.conf"] for d in scenario.hidden.lab.devices if d.files]
    assert configs and not any("router rip" in c for c in configs)
    assert all("ripd=yes" in d.files["/etc/frr/daemons"] for d in scenario.hidden.lab.devices
               if d.files)  # fmt: skip
    solution = "\n".join(line for call in scenario.hidden.solution
                         for line in call.arguments["lines"])  # fmt: skip
    assert "router rip" in solution and "authentication" not in solution


@pytest.mark.parametrize("level", LEVELS)
def test_networks_stay_within_rips_reach(level: int) -> None:
    for seed in range(1, 13):
        network, _ = plan_instance("rip-routing", level, seed)
        graph = network.router_graph()
        topology = make_topology("chain", 2, 1).model_copy(
            update={"routers": sorted(graph.nodes), "links": sorted(graph.edges)}
        )
        assert hop_span(topology) <= MAX_HOPS


def test_a_passive_port_stops_updates_one_way_only() -> None:
    model, routers = _ring(5)
    network = model.network
    a, b = sorted(network.router_graph().edges)[0]
    host_a = next(h for h in network.lans if network.router_of(h) == a)
    host_b = next(h for h in network.lans if network.router_of(h) == b)
    baseline = model.courses(Impact())
    assert baseline[host_b, host_a].paths == {(b, a)}
    silenced = model.courses(Impact(silenced={(a, b)}))
    assert silenced[host_a, host_b].paths == {(a, b)}, "a still learns from b"
    (path,) = silenced[host_b, host_a].paths
    assert len(path) == len(routers), "b goes the long way round"


def test_an_offset_moves_one_prefix_off_a_link() -> None:
    model, _ = _ring(5)
    network = model.network
    a, b = sorted(network.router_graph().edges)[0]
    host_a = next(h for h in network.lans if network.router_of(h) == a)
    host_b = next(h for h in network.lans if network.router_of(h) == b)
    others = [h for h in network.lans if h not in (host_a, host_b)]
    found = model.courses(Impact(prepends={(a, b, host_a): 4}))
    assert all(len(path) == 5 for path in found[host_b, host_a].paths)
    assert found[host_a, host_b].paths == {(a, b)}
    assert all(found[host_b, h] == model.courses(Impact())[host_b, h] for h in others)


def test_routes_end_at_sixteen_hops() -> None:
    model, _ = _ring(8)
    network = model.network
    a, b = sorted(network.router_graph().edges)[0]
    host_a = next(h for h in network.lans if network.router_of(h) == a)
    host_b = next(h for h in network.lans if network.router_of(h) == b)
    (n,) = set(network.router_graph().neighbors(b)) - {a}
    down = frozenset((a, b))
    round_about = model.courses(Impact(down_links={down}, prepends={(n, b, host_a): 7}))
    assert round_about[host_b, host_a].arrives, "7 hops round plus 7 is 14: within reach"
    beyond = model.courses(Impact(down_links={down}, prepends={(n, b, host_a): 8}))
    assert beyond[host_b, host_a].lost, "15 hops is beyond reach"


def test_every_fault_type_lands_somewhere() -> None:
    family = registry.family("rip-routing")
    seen = {
        fault.type
        for level in LEVELS
        for seed in range(1, 41)
        for fault in generate("rip-routing", level, seed).hidden.faults
    }
    assert set(family.types) <= seen
