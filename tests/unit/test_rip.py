"""RIP: configuration, the planner's hop bound, the forwarding model, the fault catalogue and the
heuristic agent's repair of a router's timers."""

from __future__ import annotations

import random

import anyio
import pytest

from netdojo.clients.heuristic.fixes_rip import _fix_timers
from netdojo.clients.heuristic.model import DeviceState, Port, RunningConfig, Snapshot, Topology
from netdojo.scenarios import registry
from netdojo.scenarios.forwarding import Forwarding, Impact
from netdojo.scenarios.generate import plan_instance
from netdojo.scenarios.network import plan_network, router_config
from netdojo.scenarios.registry import LEVELS
from netdojo.scenarios.rip import TIMERS, rip_lines
from netdojo.scenarios.rip_plan import MAX_HOPS, hop_span
from netdojo.scenarios.topology import make_topology

from .instances import instance


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
    scenario = instance("rip-build", 1, 2)
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
        for fault in instance("rip-routing", level, seed).hidden.faults
    }
    assert set(family.types) <= seen


def test_slow_timers_silence_a_router_towards_every_neighbour() -> None:
    """`rip.timers`: the router's neighbours stop learning from it (its LANs are cut off from
    every other host) while it keeps learning from them; the fix puts the network's timers
    back."""
    seen = 0
    for level, seed in ((1, 3), (2, 4), (3, 5)):
        scenario = instance("rip-routing", level, seed)
        hidden = scenario.hidden
        for fault in (f for f in hidden.faults if f.type == "rip.timers"):
            seen += 1
            router = fault.device
            (inject,) = fault.inject
            (fix,) = fault.fix
            assert inject.arguments["lines"] == ["router rip", " timers basic 3600 10800 7200"]
            assert fix.arguments["lines"] == ["router rip", f" {TIMERS}"]
            network, _ = plan_instance("rip-routing", level, seed)
            neighbours = set(network.router_graph()[router])
            assert {t.device for t in fault.present} == neighbours
            assert all(t.kind == "route" and not t.params.expect for t in fault.present)
            repaired = {t.id for t in hidden.targets if t.kind == "route" and t.params.expect}
            assert {t.id for t in fault.present} <= repaired
            behind = [h for h in network.lans if network.router_of(h) == router]
            pinged = {t.id for t in hidden.targets if t.kind == "ping"}
            for host in behind:
                for other in set(network.lans) - {host}:
                    a, b = sorted((host, other))
                    assert f"target:ping:{a}-{b}" in pinged
    assert seen


def test_a_router_silenced_towards_all_neighbours_is_bypassed_and_cut_off() -> None:
    model, routers = _ring(5)
    network = model.network
    router = routers[0]
    neighbours = set(network.router_graph()[router])
    impact = Impact(silenced={(router, n) for n in neighbours})
    host = next(h for h in network.lans if network.router_of(h) == router)
    states = model.ping_states(impact)
    assert all(states[host, other] == "broken" for other in network.lans if other != host)
    found = model.courses(impact)
    others = [h for h in network.lans if h != host]
    for a in others:
        assert found[host, a].arrives, "the router still routes out"
        for b in others:
            if a != b:
                assert all(router not in path for path in found[a, b].paths)


class _Actor:
    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    async def configure(self, device: str, lines: list[str], why: str) -> None:
        self.calls.append((device, lines))


def _rip_snapshot(timers: dict[str, str | None]) -> Snapshot:
    names = sorted(timers)
    roles = dict.fromkeys(names, "router")
    ports = {name: [Port(name, "eth0", "t0", None)] for name in names}
    devices = {}
    for name, line in timers.items():
        text = "router rip\n version 2\n" + (f" {line}\n" if line else "") + " allow-ecmp\nexit\n"
        devices[name] = DeviceState(name, "router", config=RunningConfig.parse(text))
    return Snapshot(Topology(roles, ports, {"t0": names}), devices)


def test_the_heuristic_gives_the_odd_router_the_networks_timers() -> None:
    actor = _Actor()
    snap = _rip_snapshot({"r1": TIMERS, "r2": "timers basic 3600 10800 7200", "r3": TIMERS})
    anyio.run(_fix_timers, snap, actor)
    assert actor.calls == [("r2", ["router rip", f" {TIMERS}"])]
    actor = _Actor()
    anyio.run(_fix_timers, _rip_snapshot({"r1": TIMERS, "r2": None, "r3": TIMERS}), actor)
    assert actor.calls == [("r2", ["router rip", f" {TIMERS}"])], "defaults are odd too"
    actor = _Actor()
    anyio.run(_fix_timers, _rip_snapshot({"r1": TIMERS, "r2": "timers basic 30 180 120"}), actor)
    assert actor.calls == [], "two routers that differ: nothing says which is right"
