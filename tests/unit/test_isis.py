"""IS-IS: configuration rendering, the forwarding model of an overloaded router, and the
isis-adjacency family's draws."""

from __future__ import annotations

import itertools
import random

import pytest

from netdojo.scenarios import registry
from netdojo.scenarios.forwarding import Forwarding, Impact, courses
from netdojo.scenarios.generate import plan_instance
from netdojo.scenarios.isis import net, system_id
from netdojo.scenarios.model import Scenario
from netdojo.scenarios.network import Network, daemons_file, plan_network, render_lab
from netdojo.scenarios.registry import LEVELS
from netdojo.scenarios.topology import make_topology

from .instances import instance

FAMILY = "isis-adjacency"


def _network(shape: str, routers: int, seed: int = 3) -> Network:
    return plan_network(make_topology(shape, routers, seed), 1, random.Random(seed))


def _config(network: Network, router: str) -> list[str]:
    lab = render_lab(network, "isis", "lab")
    device = next(d for d in lab.devices if d.name == router)
    return device.files["/etc/frr/frr.conf"].splitlines()


def _block(lines: list[str], head: str) -> list[str]:
    """The lines of every block that starts with ``head``, joined."""
    found, inside = [], False
    for line in lines:
        if line == head:
            inside = True
        elif line == "exit":
            inside = False
        elif inside:
            found.append(line)
    return found


def test_the_system_id_and_net_spell_the_loopback() -> None:
    assert system_id("10.255.0.23") == "0102.5500.0023"
    assert net("10.255.0.7") == "49.0001.0102.5500.0007.00"
    assert net("10.255.0.7", "49.0002") == "49.0002.0102.5500.0007.00"


def test_a_router_runs_fast_point_to_point_level_1_isis() -> None:
    network = _network("ring", 4)
    for router in network.routers:
        lines = _config(network, router.name)
        assert router.loopback is not None
        process = _block(lines, "router isis CORE")
        assert f" net {net(router.loopback)}" in process
        assert {" is-type level-1", " metric-style wide", " lsp-gen-interval 1"} <= set(process)
        assert " isis passive" in _block(lines, "interface lo")
        for iface in router.ifaces:
            block = _block(lines, f"interface {iface.name}")
            assert " ip router isis CORE" in block
            if network.node(iface.peer).role == "host":
                assert " isis passive" in block
            else:
                assert {
                    " isis network point-to-point",
                    " isis hello-interval 1",
                    " isis hello-multiplier 4",
                } <= set(block)
                assert " isis passive" not in block
        assert not any(line.startswith("router ospf") for line in lines)


def test_the_authenticated_link_has_the_same_hello_password_on_both_ends() -> None:
    network = _network("ring", 4)
    (link, key), *_ = network.ospf_md5.items()
    ends = next(e for name, e in network.links if name == link)
    for device, index in ends:
        block = _block(_config(network, device), f"interface eth{index}")
        assert f" isis password md5 {key}" in block


def test_an_isis_lab_starts_isisd_alone_with_its_vty_on_loopback() -> None:
    lab = render_lab(_network("chain", 3), "isis", "lab")
    router = next(d for d in lab.devices if d.role == "router")
    daemons = router.files["/etc/frr/daemons"]
    assert "isisd=yes" in daemons and "ospfd=no" in daemons and "bgpd=no" in daemons
    assert 'isisd_options="  -A 127.0.0.1"' in daemons
    assert "isisd_options" not in daemons_file({"ospfd"})


def test_an_overloaded_router_carries_no_transit_but_is_reached() -> None:
    ring = _network("ring", 4)
    model = Forwarding(ring, "isis")
    a, b = sorted(ring.lans)
    paths = model.courses(Impact())[a, b].paths
    (path,) = paths
    if len(path) > 2:
        middle = path[1]
        detoured = model.courses(Impact(overloaded={middle}))[a, b]
        assert detoured.arrives and all(middle not in p for p in detoured.paths)
    own = ring.router_of(a)
    from_own = model.courses(Impact(overloaded={own}))
    assert from_own[a, b].arrives and from_own[b, a].arrives

    chain = _network("chain", 4, seed=5)
    model = Forwarding(chain, "isis")
    states = model.ping_states(Impact())
    broken = next(
        (
            (x, y, p[1])
            for (x, y), c in model.courses(Impact()).items()
            for p in c.paths
            if len(p) > 2
        ),
        None,
    )
    assert broken is not None and states[broken[0], broken[1]] == "works"
    cut = model.ping_states(Impact(overloaded={broken[2]}))
    assert cut[broken[0], broken[1]] == "broken"


@pytest.mark.parametrize("level", LEVELS)
def test_every_type_is_drawn_at_every_level(level: int) -> None:
    wanted = set(registry.family(FAMILY).types)
    seen: set[str] = set()
    for seed in range(1, 121):
        seen |= {f.type for f in instance(FAMILY, level, seed).hidden.faults}
        if wanted <= seen:
            break
    assert wanted <= seen, wanted - seen


def test_link_faults_are_judged_by_isis_adjacencies_and_guards_cover_the_rest() -> None:
    guarded = 0
    for seed in range(1, 11):
        hidden = instance(FAMILY, 2, seed).hidden
        guarded += bool(hidden.guards)  # none when the faults break every link and host pair
        assert {t.kind for t in hidden.guards} <= {"ping", "isis_adjacency"}
        assert any(t.kind == "isis_adjacency" for t in hidden.guards + hidden.targets)
        for fault in hidden.faults:
            if fault.type in ("isis.passive_transit", "isis.auth_mismatch"):
                (present,) = fault.present
                assert present.kind == "isis_adjacency" and present.params.expect is False
    assert guarded >= 8


def test_an_isis_build_forbids_static_routes_by_whole_words() -> None:
    """`ip route` begins `ip router isis`: the adherence test must not take one for the other."""
    adherence = instance("isis-build", 1, 1).hidden.adherence
    static = [t for t in adherence if t.id.startswith("adherence:protocol:static route:")]
    assert static
    for test in static:
        assert test.kind == "config" and test.params.match == "words"
        assert test.params.pattern.split() == ["ip", "route"] and test.params.expect is False


def test_a_router_that_does_not_hear_its_neighbour_routes_round_it_one_way() -> None:
    """One end of a link drops its neighbour's hellos: it leaves the neighbour out of its LSP,
    so traffic out of its side goes round, while the neighbour, which still hears it, keeps
    sending traffic into its side over the link."""
    ring = _network("ring", 5)
    model = Forwarding(ring, "isis")
    hosts = {ring.router_of(h): h for h in ring.lans}
    a, b = next((x, y) for x, y in ring.transit_links() if x in hosts and y in hosts)
    found = model.courses(Impact(silenced={(b, a)}))
    assert found[hosts[b], hosts[a]].paths == {(b, a)}
    (path,) = found[hosts[a], hosts[b]].paths
    assert len(path) == 5 and path[0] == a and path[-1] == b
    assert model.ping_states(Impact(silenced={(b, a)}))[hosts[a], hosts[b]] == "works"
    chain = _network("chain", 3, seed=5)
    model = Forwarding(chain, "isis")
    x, y = chain.transit_links()[0]
    states = model.ping_states(Impact(silenced={(y, x)}))
    assert states == model.ping_states(Impact(down_links={frozenset((x, y))}))


def test_a_shorter_mtu_is_judged_on_the_end_that_has_it() -> None:
    """`isis.hello_padding_mtu`: the present test and the repair are the shorter end's
    adjacency (its neighbour keeps the adjacency Up), and no guard watches the link."""
    seen = 0
    for level, seed in ((1, 4), (1, 5), (2, 1)):
        hidden = instance(FAMILY, level, seed).hidden
        for fault in (f for f in hidden.faults if f.type == "isis.hello_padding_mtu"):
            seen += 1
            port = fault.params["interface"]
            assert [c.arguments["command"] for c in fault.inject] == [
                f"ip link set dev {port} mtu 1400"
            ]
            assert [c.arguments["command"] for c in fault.fix] == [
                f"ip link set dev {port} mtu 1500"
            ]
            (present,) = fault.present
            assert present.kind == "isis_adjacency" and present.device == fault.device
            assert present.params.interface == port and present.params.expect is False
            repaired = [t for t in hidden.targets if t.id == present.id]
            assert [t.params.expect for t in repaired] == [True]
            peer = present.params.neighbor
            watched = {(t.device, t.params.neighbor) for t in hidden.guards if t.kind != "ping"}
            assert not {(fault.device, peer), (peer, fault.device)} & watched
    assert seen == 4


def _address_facing(scenario: Scenario, device: str, peer: str) -> str:
    """``device``'s address on its link to ``peer``, from the public topology."""
    (link,) = [name for name, ends in scenario.public.links if set(ends) == {device, peer}]
    facts = next(d for d in scenario.public.devices if d.name == device)
    return next(i.address for i in facts.interfaces if i.link == link).split("/")[0]


def test_a_readdressed_port_is_judged_by_the_routes_over_its_link() -> None:
    """`iface.wrong_address`: IS-IS checks no subnet in point-to-point hellos, so the
    adjacency stays Up; the repair is shown by each end's route to the other's loopback
    through the other's intended address on the link, which a stub router with no host also
    has (a stub's only target was once the adjacency, which never failed)."""
    seen = 0
    for level, seed in ((1, 17), (1, 24), (2, 2), (3, 5)):
        scenario = instance(FAMILY, level, seed)
        for fault in (f for f in scenario.hidden.faults if f.type == "iface.wrong_address"):
            seen += 1
            a = fault.device
            tag = f"{fault.type}:"
            owned = [t for t in scenario.hidden.targets if t.id.startswith(tag)]
            (b,) = [t.params.neighbor for t in owned if t.kind == "isis_adjacency"]
            routes = {(t.device, t.params.via) for t in owned if t.kind == "route"}
            intended = fault.params["intended"].split("/")[0]
            assert routes == {(b, intended), (a, _address_facing(scenario, b, a))}
            assert all(t.params.expect for t in owned)
    assert seen == 4


def test_a_readdressed_port_is_still_routed_over_and_its_ends_drop_what_crosses_it() -> None:
    """IS-IS keeps the adjacency of a readdressed port Up, so no flow goes round the link: a
    flow whose only best next hop is over it fails at that end, where a cut link would have
    rerouted it; a flow with another best next hop there keeps that one."""
    rerouted = kept = 0
    for seed in range(1, 7):
        network, _ = plan_instance("isis-adjacency", 3, seed)
        unchanged = courses(network, "isis", Impact())
        for a, b in network.transit_links():
            link = frozenset((a, b))
            cut = courses(network, "isis", Impact(down_links={link}))
            readdressed = courses(network, "isis", Impact(unresolved={link}))
            for pair, course in unchanged.items():
                if not any(_over(path, link) for path in course.paths):
                    assert readdressed[pair] == course, (seed, link, pair)
                    continue
                assert not any(_over(path, link) for path in readdressed[pair].paths)
                kept += readdressed[pair].arrives
                rerouted += cut[pair].arrives and readdressed[pair].fails
    assert rerouted and kept  # both kinds met: lost where a cut reroutes, kept over a tie


def _over(path: tuple[str, ...], link: frozenset[str]) -> bool:
    return any(frozenset(hop) == link for hop in itertools.pairwise(path))
