"""IPv6 routing with OSPFv3 (FRR `ospf6d`): how a router's IPv6 configuration is written,
and the hidden test of an OSPFv3 adjacency.

The data plane is IPv6 only: every transit link and host LAN is a /64, routers forward IPv6
(`ipv6 forwarding`, which FRR otherwise writes off) and hosts take a static address and a
default route through their router's global address. The loopback keeps its IPv4 address only
as the router-id OSPFv3 needs (a 32-bit number written as an IPv4 address); nothing routes
to it. Transit ports are fast point-to-point circuits (hello every second, neighbours dead
after four); LAN ports are passive. OSPFv3 forms its adjacencies between link-local
addresses, so a wrong global prefix on a transit port does not break the link: the LAN side
is where a wrong prefix shows.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

from netdojo.scenarios.hidden_tests import Ospf6AdjacencyParams, Ospf6AdjacencyTest

if TYPE_CHECKING:
    from netdojo.scenarios.network import Network, Node

AREA = "0.0.0.0"
ACCEPT_RA = {"net.ipv6.conf.eth0.accept_ra": 2}
"""The setting of a host that takes its address and default route from router advertisements:
it forwards, as every lab device does, so it must be told to accept them anyway (and a running
device cannot write the setting: it is given when the device is created)."""
HELLO_INTERVAL = 1
DEAD_INTERVAL = 4


def address_lines(router: Node) -> list[str]:
    """The router's global IPv6 addresses, and its IPv4 router-id on the loopback."""
    lines: list[str] = []
    for iface in router.ifaces:
        lines += [f"interface {iface.name}", f" ipv6 address {iface.address}", "exit"]
    return [*lines, "interface lo", f" ip address {router.loopback}/32", "exit"]


def ospf6_lines(network: Network, router: Node) -> list[str]:
    """IPv6 forwarding on; OSPFv3 in the backbone on every port, LAN ports passive. Like the
    OSPFv2 routers, they take every LSA instance as it arrives: with the default one-second
    minimum between instances, a router's LSA re-originated as its first adjacency comes up
    is dropped and waits for its retransmission, and routes come 5 s after the adjacencies."""
    lines = ["ipv6 forwarding"]
    for iface in router.ifaces:
        lines += [f"interface {iface.name}", f" ipv6 ospf6 area {AREA}"]
        if network.node(iface.peer).role == "router":
            lines += [
                " ipv6 ospf6 network point-to-point",
                f" ipv6 ospf6 hello-interval {HELLO_INTERVAL}",
                f" ipv6 ospf6 dead-interval {DEAD_INTERVAL}",
            ]
        else:
            lines.append(" ipv6 ospf6 passive")
        lines.append("exit")
    return [
        *lines,
        "router ospf6",
        f" ospf6 router-id {router.loopback}",
        " timers throttle spf 0 50 500",
        " timers lsa min-arrival 0",
        "exit",
    ]


def host_startup(address: str, gateway: str) -> list[str]:
    """A host's IPv6 address (no duplicate detection: it is usable at once) and default route.
    Router advertisements do not touch it: it forwards, as every lab device does, and a
    forwarding port ignores them unless created with `ACCEPT_RA`."""
    return [
        f"ip -6 address add {address} dev eth0 nodad",
        f"ip -6 route add default via {gateway}",
    ]


def eui64(prefix: str, mac: str) -> str:
    """The SLAAC address a port with ``mac`` takes in the /64 ``prefix`` (modified EUI-64:
    the MAC split by ``ff:fe``, its universal/local bit flipped), with the prefix length."""
    octets = bytes.fromhex(mac.replace(":", ""))
    iid = bytes([octets[0] ^ 0x02, *octets[1:3], 0xFF, 0xFE, *octets[3:]])
    network = ipaddress.IPv6Network(prefix)
    return f"{network.network_address + int.from_bytes(iid, 'big')}/64"


def eui64_mac(address: str) -> str:
    """The MAC whose modified EUI-64 interface id ``address`` carries (`eui64` undone)."""
    iid = int(ipaddress.IPv6Interface(address).ip).to_bytes(16, "big")[8:]
    octets = [iid[0] ^ 0x02, *iid[1:3], *iid[5:]]
    return ":".join(f"{octet:02x}" for octet in octets)


def ospf6_adjacency_test(
    network: Network, a: str, b: str, expect: bool, tag: str
) -> Ospf6AdjacencyTest:
    """Whether ``a`` has ``b`` (by router-id) as a Full OSPFv3 neighbour."""
    loopback = network.node(b).loopback
    assert loopback is not None
    state = "is" if expect else "is not"
    return Ospf6AdjacencyTest(
        id=f"{tag}:ospf6:{a}-{b}",
        description=f"{a} {state} in a Full OSPFv3 adjacency with {b}",
        device=a,
        params=Ospf6AdjacencyParams(neighbor=loopback, expect=expect),
    )
