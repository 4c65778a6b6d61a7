"""eBGP over IPv6: the SLAAC plan (EUI-64 addresses from fixed MACs), the lab it renders
(sessions, the IPv6 unicast family, router advertisements, hosts that accept them), the
faults' injections and fixes, and the heuristic agent's repairs read from configurations."""

from __future__ import annotations

import ipaddress
import random
from typing import Any

import anyio
import pytest

from netdojo.clients.heuristic.fixes_bgp6 import fix_advertisements, fix_bgp6
from netdojo.clients.heuristic.model import DeviceState, Port, RunningConfig, Snapshot, Topology
from netdojo.judges.checks import bgp_peer_state
from netdojo.scenarios.faults import ipv6_bgp
from netdojo.scenarios.faults.base import FaultContext
from netdojo.scenarios.ipv6 import ACCEPT_RA, eui64, eui64_mac
from netdojo.scenarios.ipv6_plan import plan_ipv6, plan_ipv6_slaac, slaac_mac
from netdojo.scenarios.network import Network, render_lab
from netdojo.scenarios.registry import family
from netdojo.scenarios.taxonomy import TAXONOMY
from netdojo.scenarios.topology import make_topology

from .instances import instance

FAMILY = "ipv6-bgp"


def _network(seed: int = 3, shape: str = "ring") -> Network:
    return plan_ipv6_slaac(make_topology(shape, 5, seed), 2, random.Random(seed))


def test_eui64_flips_the_universal_bit_and_inserts_fffe() -> None:
    assert eui64("fd00:16::/64", "02:00:00:00:00:06") == "fd00:16::ff:fe00:6/64"
    assert eui64("2001:db8::/64", "52:54:00:12:34:56") == "2001:db8::5054:ff:fe12:3456/64"
    for mac in ("02:00:00:01:01:05", "aa:bb:cc:dd:ee:ff"):
        assert eui64_mac(eui64("fd00:1:2::/64", mac)) == mac


def test_a_session_is_read_in_whichever_address_family_lists_its_peer() -> None:
    peer = "2001:db8:1:2::2"
    v6_only = {"ipv6Unicast": {"peers": {peer: {"state": "Established"}}}}
    both = {
        "ipv4Unicast": {"peers": {peer: {"state": "Established"}, "10.0.0.2": {"state": "Active"}}},
        "ipv6Unicast": {"peers": {peer: {"state": "Established"}}},
    }
    assert bgp_peer_state(v6_only, peer) == "Established"
    assert bgp_peer_state(both, peer) == "Established"
    assert bgp_peer_state(both, "10.0.0.2") == "Active"
    assert bgp_peer_state(both, "10.0.0.9") == "absent"
    assert bgp_peer_state({}, peer) == "absent"


def test_slaac_hosts_differ_from_the_static_plan_only_in_their_address() -> None:
    topology = make_topology("ring", 5, 3)
    static = plan_ipv6(topology, 2, random.Random(3))
    slaac = plan_ipv6_slaac(topology, 2, random.Random(3))
    assert [n.name for n in static.nodes] == [n.name for n in slaac.nodes]
    for before, after in zip(static.nodes, slaac.nodes, strict=True):
        if before.role == "router":
            assert before == after
            continue
        index = sorted(static.lans).index(before.name)
        mac = slaac_mac(index, before.ifaces[0].address)
        assert after.ifaces[0].address == eui64(static.lans[before.name], mac)
        assert ipaddress.ip_interface(after.ifaces[0].address).network == ipaddress.ip_network(
            static.lans[before.name]
        )


def test_the_lab_peers_over_ipv6_and_hosts_take_router_advertisements() -> None:
    network = _network()
    lab = render_lab(network, "bgp6", "lab")
    assert all(device.ipv6 for device in lab.devices)
    macs = set()
    for device in lab.devices:
        node = network.node(device.name)
        if device.role == "host":
            assert device.startup == [] and device.sysctls == ACCEPT_RA
            macs.add(device.macs[0])
            assert eui64(network.lans[node.name], device.macs[0]) == node.ifaces[0].address
            continue
        config = device.files["/etc/frr/frr.conf"]
        lines = config.splitlines()
        assert "bgpd=yes" in device.files["/etc/frr/daemons"]
        assert "ipv6 forwarding" in lines and f"router bgp {node.asn}" in lines
        assert " address-family ipv6 unicast" in lines
        assert " address-family ipv4 unicast" not in lines
        for iface in node.ifaces:
            peer = network.node(iface.peer)
            if peer.role == "router":
                address = peer.iface_to(node.name).address.split("/")[0]
                assert f" neighbor {address} remote-as {peer.asn}" in lines
                assert f"  neighbor {address} activate" in lines
            else:
                prefix = str(ipaddress.ip_interface(iface.address).network)
                assert f"  network {prefix}" in lines
                assert f" ipv6 nd prefix {prefix}" in lines
        assert " no ipv6 nd suppress-ra" in lines or not network.lans.keys() & {
            i.peer for i in node.ifaces
        }
    assert len(macs) == len(network.hosts)


@pytest.mark.parametrize("level", [1, 2, 3])
def test_every_instance_pings_ipv6_and_guards_bgp_sessions(level: int) -> None:
    kinds = set()
    for seed in range(1, 12):
        scenario = instance(FAMILY, level, seed)
        for test in [*scenario.hidden.targets, *scenario.hidden.guards]:
            kinds.add(test.kind)
            if test.kind == "ping":
                assert ipaddress.ip_address(test.params.target).version == 6
            if test.kind == "bgp_session":
                assert ipaddress.ip_address(test.params.peer).version == 6
    assert {"ping", "bgp_session"} <= kinds


def test_every_fault_type_is_drawn_and_classified() -> None:
    drawn = {
        fault.type
        for level in (1, 2, 3)
        for seed in range(1, 41)
        for fault in instance(FAMILY, level, seed).hidden.faults
    }
    types = {kind.id for kind in family(FAMILY).faults}
    assert len(types) == 7 and types <= drawn
    assert all(kind in TAXONOMY for kind in types)


def _lines(calls: Any) -> list[str]:
    return [line for call in calls for line in call.arguments.get("lines", [])]


def _draw(injector: Any, seed: int, shape: str = "ring") -> Any:
    ctx = FaultContext(network=_network(seed, shape), routing="bgp6", rng=random.Random(seed))
    return ctx, injector.draw(ctx)


def test_the_ipv6_family_left_inactive_on_one_end() -> None:
    ctx, plan = _draw(ipv6_bgp.af_not_activated, 4)
    peer = plan.fault.params["peer"]
    head = [f"router bgp {ctx.network.node(plan.fault.device).asn}", "address-family ipv6 unicast"]
    assert _lines(plan.fault.inject) == [*head, f"no neighbor {peer} activate"]
    assert _lines(plan.fault.fix) == [*head, f"neighbor {peer} activate"]
    (present,) = plan.fault.present
    assert present.params.pattern == f"neighbor {peer} activate" and not present.params.expect
    (link,) = plan.impact.down_links
    assert plan.impact.idle_links == {link}  # the session stays up: no adjacency is lost


def test_a_lan_unannounced_in_the_ipv6_family() -> None:
    for seed in range(1, 9):
        ctx, plan = _draw(ipv6_bgp.lan_unannounced, seed)
        prefix = plan.fault.params["prefix"]
        inject = _lines(plan.fault.inject)
        assert inject[1:3] == ["address-family ipv6 unicast", f"no network {prefix}"]
        assert _lines(plan.fault.fix)[-1] == f"network {prefix}"
        for line in inject[3:]:  # a retyped statement, for a /64 that is no LAN
            typo = line.split()[1]
            assert typo not in ctx.network.lans.values()
            assert ipaddress.ip_network(typo).prefixlen == 64


def test_a_wrong_peer_as_is_fixed_with_a_clear() -> None:
    _, plan = _draw(ipv6_bgp.remote_as_wrong, 5)
    params = plan.fault.params
    assert _lines(plan.fault.inject)[-1] == f"neighbor {params['peer']} remote-as {params['wrong']}"
    assert plan.fault.fix[-1].arguments["command"] == f"clear bgp {params['peer']}"
    assert [t.kind for t in plan.fault.present] == ["bgp_session"]


def test_next_hops_rewritten_to_addresses_nobody_has() -> None:
    ctx, plan = _draw(ipv6_bgp.nexthop_unreachable, 6)
    hop = ipaddress.ip_address(plan.fault.params["next_hop"])
    assert hop in ipaddress.ip_network("2001:db8:ffff::/48")
    inject = _lines(plan.fault.inject)
    assert (
        f" set ipv6 next-hop global {hop}" in inject
        and " set ipv6 next-hop prefer-global" in inject
    )
    assert inject[-1].endswith(" in")
    receiver = plan.fault.device
    assert {r for _, r, _ in plan.impact.filtered} == {receiver}
    assert {h for _, _, h in plan.impact.filtered} == set(ctx.network.lans)

    ctx, plan = _draw(ipv6_bgp.linklocal_nexthop, 2, "tree")
    assert plan is not None
    hop = ipaddress.ip_address(plan.fault.params["next_hop"])
    assert hop.is_link_local
    inject = _lines(plan.fault.inject)
    assert f" set ipv6 next-hop local {hop}" in inject and inject[-1].endswith(" out")
    assert f"route-map {plan.fault.params['route-map']} permit 20" in inject  # the rest passes
    (receiver,) = plan.impact.drops


def test_a_prefix_list_drops_a_lan_learnt_only_through_that_peer() -> None:
    ctx, plan = _draw(ipv6_bgp.prefix_filtered, 2, "tree")
    assert plan is not None
    prefix = plan.fault.params["prefix"]
    inject = _lines(plan.fault.inject)
    name = plan.fault.params["prefix-list"]
    assert inject[:2] == [
        f"ipv6 prefix-list {name} seq 5 deny {prefix}",
        f"ipv6 prefix-list {name} seq 10 permit ::/0 le 128",
    ]
    assert (
        _lines(plan.fault.fix)[-1]
        == f"no neighbor {plan.fault.params['peer']} prefix-list {name} in"
    )
    (_, receiver, host), *_ = sorted(plan.impact.filtered)
    assert ctx.network.lans[host] == prefix and receiver == plan.fault.device


def test_router_advertisements_suppressed_on_a_lan_port() -> None:
    ctx, plan = _draw(ipv6_bgp.ra_suppressed, 3)
    (host,) = plan.impact.isolated
    assert ctx.network.router_of(host) == plan.fault.device
    assert _lines(plan.fault.inject)[-1] == "ipv6 nd suppress-ra"
    assert _lines(plan.fault.fix)[-1] == "no ipv6 nd suppress-ra"
    (present,) = plan.fault.present
    assert present.kind == "default_route" and present.device == host
    assert present.params.gateway is None


class _Actor:
    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []
        self.commands: list[tuple[str, str]] = []

    async def configure(self, device: str, lines: list[str], why: str) -> None:
        self.calls.append((device, lines))

    async def execute(self, device: str, command: str, why: str) -> None:
        self.commands.append((device, command))


def _config(name: str, asn: int, ports: list[str], af: list[str], extra: str = "") -> str:
    text = "".join(f"interface eth{k}\n ipv6 address {a}\nexit\n" for k, a in enumerate(ports))
    text += extra + f"router bgp {asn}\n bgp router-id 10.255.0.{asn % 100}\n"
    neighbours = {"r1": ("2001:db8:1::2", 65002), "r2": ("2001:db8:1::1", 65001)}
    address, peer_as = neighbours[name]
    text += f" neighbor {address} remote-as {peer_as}\n !\n address-family ipv6 unicast\n"
    return text + "".join(f"  {line}\n" for line in af) + " exit-address-family\nexit\n"


def _snapshot(configs: dict[str, str]) -> Snapshot:
    links = {"t0": ["r1", "r2"], "lan0": ["r1", "h1"], "lan1": ["r2", "h2"]}
    ports = {
        "r1": [Port("r1", "eth0", "t0", None), Port("r1", "eth1", "lan0", None)],
        "r2": [Port("r2", "eth0", "t0", None), Port("r2", "eth1", "lan1", None)],
        "h1": [Port("h1", "eth0", "lan0", None)],
        "h2": [Port("h2", "eth0", "lan1", None)],
    }
    roles = {"r1": "router", "r2": "router", "h1": "host", "h2": "host"}
    topo = Topology(roles, ports, links)
    devices = {
        name: DeviceState(name, roles[name], config=RunningConfig.parse(configs[name]))
        if name in configs
        else DeviceState(name, roles[name])
        for name in roles
    }
    return Snapshot(topo, devices)


def test_the_parser_splits_the_ipv6_family_out() -> None:
    text = _config("r1", 65001, ["2001:db8:1::1/64"], ["network fd00:1::/64"])
    config = RunningConfig.parse(text)
    assert config.bgp6_af == ["network fd00:1::/64"] and config.bgp_af == []
    assert config.bgp_neighbors() == {"2001:db8:1::2": 65002}
    assert RunningConfig.parse("router bgp 1\n neighbor 10.0.0.1 remote-as 2\n").bgp6_af is None


def test_the_heuristic_repairs_bgp_over_ipv6_from_the_configurations() -> None:
    policy = (
        "ipv6 prefix-list IN-R2 seq 5 deny fd00:2::/64\n"
        "ipv6 prefix-list IN-R2 seq 10 permit ::/0 le 128\n"
        "route-map NH permit 10\n set ipv6 next-hop local fe80::5:6\nexit\n"
    )
    configs = {
        # r1: a LAN unannounced (a typo instead), a prefix-list dropping r2's LAN
        "r1": _config(
            "r1",
            65001,
            ["2001:db8:1::1/64", "fd00:1::1/64"],
            [
                "network fd00:1:0:1::/64",
                "neighbor 2001:db8:1::2 activate",
                "neighbor 2001:db8:1::2 prefix-list IN-R2 in",
            ],
            extra=policy,
        ),
        # r2: the neighbour not activated, its AS mistyped, a next-hop rewrite out
        "r2": _config(
            "r2",
            65002,
            ["2001:db8:1::2/64", "fd00:2::1/64"],
            ["network fd00:2::/64", "neighbor 2001:db8:1::1 route-map NH out"],
            extra=policy,
        ).replace("remote-as 65001", "remote-as 65011"),
    }
    actor = _Actor()
    anyio.run(fix_bgp6, _snapshot(configs), actor)
    af = [" address-family ipv6 unicast"]
    assert actor.calls == [
        (
            "r1",
            [
                "router bgp 65001",
                *af,
                "  network fd00:1::/64",
                "  no network fd00:1:0:1::/64",
                "  no neighbor 2001:db8:1::2 prefix-list IN-R2 in",
                " exit-address-family",
            ],
        ),
        (
            "r2",
            [
                "router bgp 65002",
                " neighbor 2001:db8:1::1 remote-as 65001",
                *af,
                "  neighbor 2001:db8:1::1 activate",
                "  no neighbor 2001:db8:1::1 route-map NH out",
                " exit-address-family",
            ],
        ),
    ]
    assert actor.commands == [("r2", "clear bgp 2001:db8:1::1")]


def test_the_heuristic_unsuppresses_advertisements_on_a_lan_port() -> None:
    lan = " ipv6 nd prefix fd00:{n}::/64\n ipv6 nd ra-interval 2\n"
    configs = {
        "r1": _config("r1", 65001, ["2001:db8:1::1/64"], [])
        + "interface eth1\n"
        + lan.format(n=1)
        + " no ipv6 nd suppress-ra\nexit\n",
        "r2": _config("r2", 65002, ["2001:db8:1::2/64"], []) + "interface eth1\n" + lan.format(n=2),
    }
    actor = _Actor()
    anyio.run(fix_advertisements, _snapshot(configs), actor)
    assert actor.calls == [("r2", ["interface eth1", " no ipv6 nd suppress-ra", "exit"])]
