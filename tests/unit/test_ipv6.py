"""IPv6: the plan readdressed in IPv6, the lab it renders (OSPFv3, forwarding, hosts), the
hidden tests' IPv6 addresses, and the judge's parsing of IPv6 counters and OSPFv3 neighbours."""

from __future__ import annotations

import ipaddress
import random
from typing import Any

import pytest
from pydantic import ValidationError

from netdojo.judges.checks import is_ipv6, ospf6_states, parse_counters, parse_counters6
from netdojo.scenarios.hidden_tests import (
    Ospf6AdjacencyParams,
    PingParams,
    RouteParams,
)
from netdojo.scenarios.ipv6_plan import plan_ipv6
from netdojo.scenarios.network import Network, daemons_file, plan_network, render_lab
from netdojo.scenarios.registry import family
from netdojo.scenarios.topology import make_topology

from .instances import instance

FAMILY = "ipv6-routing"


def _network(seed: int = 3) -> Network:
    return plan_ipv6(make_topology("ring", 5, seed), 2, random.Random(seed))


def test_every_port_is_in_ipv6_and_both_ends_of_a_link_share_a_64() -> None:
    network = _network()
    by_link: dict[str, set[ipaddress.IPv6Network]] = {}
    for node in network.nodes:
        for iface in node.ifaces:
            address = ipaddress.ip_interface(iface.address)
            assert address.version == 6 and address.network.prefixlen == 64
            assert str(address) == iface.address  # written as FRR and ip(8) print it
            by_link.setdefault(iface.link, set()).add(address.network)
    assert all(len(nets) == 1 for nets in by_link.values())
    assert len(by_link) == len({net for nets in by_link.values() for net in nets})


def test_a_host_sits_in_its_lan_and_its_gateway_is_its_router_port() -> None:
    network = _network()
    for host in network.hosts:
        lan = ipaddress.ip_network(network.lans[host.name])
        assert ipaddress.ip_address(network.host_address(host.name)) in lan
        router = network.node(network.router_of(host.name))
        port = router.iface_to(host.name)
        assert host.gateway == port.address.split("/")[0]


def test_the_readdressed_plan_keeps_the_ipv4_plan_shape() -> None:
    topology = make_topology("ring", 5, 3)
    v4 = plan_network(topology, 2, random.Random(3))
    v6 = plan_ipv6(topology, 2, random.Random(3))
    assert v4.links == v6.links
    assert [n.loopback for n in v4.nodes] == [n.loopback for n in v6.nodes]
    assert v6.ospf_md5 == {}


def test_the_lab_runs_ospf6_with_ipv6_forwarding_and_hosts_take_no_ras() -> None:
    network = _network()
    lab = render_lab(network, "ospf6", "lab")
    assert all(device.ipv6 for device in lab.devices)
    for device in lab.devices:
        if device.role == "router":
            config = device.files["/etc/frr/frr.conf"]
            assert "ipv6 forwarding" in config.splitlines()
            assert "router ospf6" in config
            assert " ip address " not in config.replace(" ip address 10.255.", "")
            assert "ospf6d=yes" in device.files["/etc/frr/daemons"]
        else:
            assert not device.sysctls
            assert device.startup[0].startswith("ip -6 address add ")
            assert any(line.startswith("ip -6 route add default via") for line in device.startup)


def test_other_routings_render_no_ospf6_options() -> None:
    assert "ospf6d_options" not in daemons_file({"ospfd"})
    assert 'ospf6d_options="  -A 127.0.0.1"' in daemons_file({"ospf6d"})


def test_hidden_tests_take_ipv6_addresses_but_a_router_id_stays_dotted() -> None:
    assert PingParams(target="fd00:168:17::20").target == "fd00:168:17::20"
    assert RouteParams(prefix="fd00:168:17::/64").prefix == "fd00:168:17::/64"
    with pytest.raises(ValidationError):
        RouteParams(prefix="fd00:168:17::1/64")  # host bits set
    with pytest.raises(ValidationError):
        Ospf6AdjacencyParams(neighbor="2001:db8::1")
    assert is_ipv6("fd00::1") and not is_ipv6("10.0.0.1")


def test_ipv6_counters_are_read_from_snmp6() -> None:
    snmp6 = "Ip6InReceives          \t12\nIcmp6OutEchoReplies    \t3\nIcmp6OutMsgs 7\n"
    counters = parse_counters6(snmp6)
    assert counters["Icmp6OutEchoReplies"] == 3 and counters["Ip6InReceives"] == 12
    assert parse_counters6("garbage\n\n") == {}
    # the IPv4 parser is unchanged
    assert parse_counters("Icmp: InMsgs OutEchoReps\nIcmp: 4 2\n")["Icmp.OutEchoReps"] == 2


def test_ospf6_neighbour_states_by_router_id() -> None:
    shown = {
        "neighbors": [
            {"neighborId": "10.255.0.2", "state": "Full", "interfaceName": "eth0"},
            {"neighborId": "10.255.0.3", "state": "Init", "interfaceName": "eth1"},
            "noise",
        ]
    }
    assert ospf6_states(shown, "10.255.0.2") == ["Full"]
    assert ospf6_states(shown, "10.255.0.3") == ["Init"]
    assert ospf6_states(shown, "10.255.0.9") == []
    assert ospf6_states({}, "10.255.0.2") == []


@pytest.mark.parametrize("level", [1, 2, 3])
def test_every_instance_pings_ipv6_and_guards_ospf6_adjacencies(level: int) -> None:
    kinds = set()
    for seed in range(1, 16):
        scenario = instance(FAMILY, level, seed)
        for test in [*scenario.hidden.targets, *scenario.hidden.guards]:
            kinds.add(test.kind)
            if test.kind == "ping":
                assert ipaddress.ip_address(test.params.target).version == 6
    assert {"ping", "ospf6_full"} <= kinds


def test_every_fault_type_is_drawn() -> None:
    drawn = {
        fault.type
        for level in (1, 2, 3)
        for seed in range(1, 41)
        for fault in instance(FAMILY, level, seed).hidden.faults
    }
    assert {kind.id for kind in family(FAMILY).faults} <= drawn


class _Actor:
    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    async def configure(self, device: str, lines: list[str], why: str) -> None:
        self.calls.append((device, lines))


def _heuristic_snapshot(configs: dict[str, str]) -> Any:
    from netdojo.clients.heuristic.model import (
        DeviceState,
        Port,
        RunningConfig,
        Snapshot,
        Topology,
    )

    links = {"t0": ["r1", "r2"], "t1": ["r2", "r3"], "t2": ["r1", "r3"]}
    ports: dict[str, list[Port]] = {r: [] for r in configs}
    for link, members in links.items():
        for member in members:
            ports[member].append(Port(member, f"eth{len(ports[member])}", link, None))
    topo = Topology({r: "router" for r in configs}, ports, links)
    devices = {
        r: DeviceState(r, "router", config=RunningConfig.parse(text)) for r, text in configs.items()
    }
    return Snapshot(topo, devices)


def _ospf6_config(eth0: list[str], eth1: list[str], extra: str = "") -> str:
    port = " ipv6 ospf6 area 0.0.0.0\n ipv6 ospf6 dead-interval 4\n ipv6 ospf6 hello-interval 1\n"
    blocks = [f"interface eth{k}\n{port}" + "".join(f" {x}\n" for x in lines) + "exit\n"
              for k, lines in enumerate((eth0, eth1))]  # fmt: skip
    return extra + "".join(blocks) + "router ospf6\n ospf6 router-id 10.255.0.1\nexit\n"


def test_the_heuristic_puts_a_lan_port_back_in_ospf6() -> None:
    import anyio

    from netdojo.clients.heuristic.fixes_ospf6 import fix_ospf6
    from netdojo.clients.heuristic.model import Port

    configs = {r: _ospf6_config([], []) for r in ("r1", "r2", "r3")}
    configs["r1"] += "interface eth2\n ipv6 ospf6 passive\nexit\n"
    snap = _heuristic_snapshot(configs)
    snap.topo.links["lan0"] = ["r1", "h1"]
    snap.topo.roles["h1"] = "host"
    snap.topo.ports["r1"].append(Port("r1", "eth2", "lan0", None))
    actor = _Actor()
    anyio.run(fix_ospf6, snap, actor)
    assert actor.calls == [("r1", ["interface eth2", " ipv6 ospf6 area 0.0.0.0", "exit"])]


def test_the_heuristic_repairs_ospf6_ports_and_ipv6_forwarding() -> None:
    import anyio

    from netdojo.clients.heuristic.fixes_ospf6 import fix_ospf6

    configs = {
        "r1": _ospf6_config(["ipv6 ospf6 passive"], [], extra="no ipv6 forwarding\n"),
        "r2": _ospf6_config(["ipv6 ospf6 hello-interval 3"], []),
        "r3": _ospf6_config([], ["ipv6 ospf6 dead-interval 12"]),
    }
    actor = _Actor()
    anyio.run(fix_ospf6, _heuristic_snapshot(configs), actor)
    assert actor.calls == [
        ("r1", ["ipv6 forwarding"]),
        ("r1", ["interface eth0", " no ipv6 ospf6 passive", "exit"]),
        ("r2", ["interface eth0", " ipv6 ospf6 hello-interval 1", "exit"]),
        ("r3", ["interface eth1", " ipv6 ospf6 dead-interval 4", "exit"]),
    ]
