"""IPv6 faults on an OSPFv3 network: adjacencies lost to an area, a hello or dead interval or
a passive port on one end of a link; a LAN port left out of OSPFv3, or readdressed into the
wrong /64; a static IPv6 blackhole for a remote LAN.

Two are not among them. A wrong prefix on a transit port: OSPFv3 forms adjacencies and
routes between link-local addresses, so the link keeps carrying traffic whatever its global
prefix. IPv6 forwarding turned off on a router: an unprivileged device cannot write the
kernel setting (zebra answers `no ipv6 forwarding` with "Can't turn off IPv6 forwarding").
"""

from __future__ import annotations

import ipaddress

from netdojo.scenarios.faults.base import (
    FaultContext,
    FaultPlan,
    address_test,
    any_end,
    end_fault,
    hosts_in,
    lan_port,
    remote_lan_route,
    route_test,
    subnet_of,
)
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.hidden_tests import HiddenTest
from netdojo.scenarios.ipv6 import AREA, DEAD_INTERVAL, HELLO_INTERVAL, ospf6_adjacency_test
from netdojo.scenarios.model import Fault, configure
from netdojo.scenarios.network import Network, interface
from netdojo.scenarios.registry import fault

WRONG_AREA = "0.0.0.1"
WRONG_HELLO = 3
WRONG_DEAD = 12
SHIFTS = (1, 2, 0x10, 0x100)  # how many /64s away a wrong LAN prefix lands


def _lost(network: Network, a: str, b: str, tag: str) -> list[HiddenTest]:
    return [
        ospf6_adjacency_test(network, a, b, False, tag),
        ospf6_adjacency_test(network, b, a, False, tag),
    ]


area_mismatch = fault("v6.ospf6_area_mismatch", routing={"ospf6"})(
    end_fault(
        any_end,
        "interface {iface}",
        [f"no ipv6 ospf6 area {AREA}", f"ipv6 ospf6 area {WRONG_AREA}"],
        [f"no ipv6 ospf6 area {WRONG_AREA}", f"ipv6 ospf6 area {AREA}"],
        _lost,
    )
)
hello_mismatch = fault("v6.ospf6_hello_mismatch", routing={"ospf6"})(
    end_fault(
        any_end,
        "interface {iface}",
        [f"ipv6 ospf6 hello-interval {WRONG_HELLO}"],
        [f"ipv6 ospf6 hello-interval {HELLO_INTERVAL}"],
        _lost,
    )
)
dead_mismatch = fault("v6.ospf6_dead_mismatch", routing={"ospf6"})(
    end_fault(
        any_end,
        "interface {iface}",
        [f"ipv6 ospf6 dead-interval {WRONG_DEAD}"],
        [f"ipv6 ospf6 dead-interval {DEAD_INTERVAL}"],
        _lost,
    )
)
passive_transit = fault("v6.ospf6_passive_transit", routing={"ospf6"})(
    end_fault(
        any_end, "interface {iface}", ["ipv6 ospf6 passive"], ["no ipv6 ospf6 passive"], _lost
    )
)


@fault("v6.ospf6_lan_unannounced", routing={"ospf6"})
def lan_unannounced(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A router's LAN port taken out of OSPFv3 (`no ipv6 ospf6 area`): the host still reaches
    its gateway, but no other router learns the LAN's prefix."""
    if not (picked := lan_port(ctx)):
        return None
    router, host, iface = picked
    prefix = subnet_of(iface)
    neighbour = min(ctx.router_graph.neighbors(router), default=None)
    if neighbour is None:
        return None
    head = f"interface {iface.name}"
    return FaultPlan(
        Fault(
            type=tag,
            device=router,
            params={"interface": iface.name, "prefix": prefix},
            inject=[configure(router, head, f"no ipv6 ospf6 area {AREA}")],
            fix=[configure(router, head, f"ipv6 ospf6 area {AREA}")],
            present=[route_test(tag, neighbour, prefix, False)],
        ),
        Impact(unannounced={host}),
        [route_test(tag, neighbour, prefix, True)],
    )


def _prefixes(network: Network) -> set[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """The prefix of every port of the network."""
    return {interface(i.address).network for n in network.nodes for i in n.ifaces}


@fault("v6.lan_wrong_prefix", routing={"ospf6"})
def lan_wrong_prefix(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A router's LAN port readdressed into another /64 (same interface id): its host's
    gateway is gone from the link and the LAN's own prefix is no longer announced."""
    if not (picked := lan_port(ctx)):
        return None
    router, host, iface = picked
    good = ipaddress.IPv6Interface(iface.address)
    taken = ctx.derived(_prefixes)
    shifts = list(SHIFTS)
    ctx.rng.shuffle(shifts)
    for shift in shifts:
        wrong = ipaddress.IPv6Interface(f"{good.ip + (shift << 64)}/64")
        if wrong.network not in taken:
            break
    else:
        return None
    head = f"interface {iface.name}"
    return FaultPlan(
        Fault(
            type=tag,
            device=router,
            params={"interface": iface.name, "wrong": str(wrong), "intended": str(good)},
            inject=[configure(router, head, f"no ipv6 address {good}", f"ipv6 address {wrong}")],
            fix=[configure(router, head, f"no ipv6 address {wrong}", f"ipv6 address {good}")],
            present=[address_test(tag, router, iface.name, str(wrong))],
        ),
        Impact(isolated={host}),
        [address_test(tag, router, iface.name, str(good))],
    )


@fault("v6.static_blackhole", routing={"ospf6"})
def static_blackhole(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A static IPv6 route to a remote LAN's /64 left pointing at a blackhole: its distance
    (1) beats OSPFv3's, so the router drops what it should pass on to that LAN."""
    if not (picked := remote_lan_route(ctx)):
        return None
    router, prefix = picked
    line = f"ipv6 route {prefix} blackhole"
    return FaultPlan(
        Fault(
            type=tag,
            device=router,
            params={"prefix": prefix},
            inject=[configure(router, line)],
            fix=[configure(router, f"no {line}")],
            present=[route_test(tag, router, prefix, True, blackhole=True)],
        ),
        Impact(drops={router: hosts_in(ctx.network, prefix)}),
        [],
    )
