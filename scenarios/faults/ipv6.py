"""IPv6 faults on an OSPFv3 network: adjacencies lost to an area, a hello interval or a
passive port on one end of a link; a router that stops forwarding IPv6; a LAN port
readdressed into the wrong /64.

A wrong prefix on a transit port is not among them: OSPFv3 forms adjacencies and routes
between link-local addresses, so the link keeps carrying traffic whatever its global prefix.
"""

from __future__ import annotations

import ipaddress

from netdojo.scenarios.faults.base import (
    FaultContext,
    FaultPlan,
    address_test,
    any_end,
    config_line_test,
    end_fault,
    lan_port,
)
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.hidden_tests import HiddenTest
from netdojo.scenarios.ipv6 import AREA, HELLO_INTERVAL, ospf6_adjacency_test
from netdojo.scenarios.model import Fault, configure
from netdojo.scenarios.network import Network
from netdojo.scenarios.registry import fault

WRONG_AREA = "0.0.0.1"
WRONG_HELLO = 3
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
passive_transit = fault("v6.ospf6_passive_transit", routing={"ospf6"})(
    end_fault(
        any_end, "interface {iface}", ["ipv6 ospf6 passive"], ["no ipv6 ospf6 passive"], _lost
    )
)


@fault("v6.forwarding_off", routing={"ospf6"})
def forwarding_off(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A router told not to forward IPv6 (`no ipv6 forwarding`, which zebra applies to the
    kernel): its adjacencies stay up and others still route through it, but it drops every
    packet it would pass on, its own LAN's included."""
    routers = sorted(r.name for r in ctx.network.routers)
    ctx.rng.shuffle(routers)
    for router in routers:
        if not ctx.take(f"v6.forwarding:{router}"):
            continue
        return FaultPlan(
            Fault(
                type=tag,
                device=router,
                params={},
                inject=[configure(router, "no ipv6 forwarding")],
                fix=[configure(router, "ipv6 forwarding")],
                present=[config_line_test(tag, router, "no ipv6 forwarding")],
            ),
            Impact(drops={router: set(ctx.network.lans)}),
            [],
        )
    return None


@fault("v6.lan_wrong_prefix", routing={"ospf6"})
def lan_wrong_prefix(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A router's LAN port readdressed into another /64 (same interface id): its host's
    gateway is gone from the link and the LAN's own prefix is no longer announced."""
    if not (picked := lan_port(ctx)):
        return None
    router, host, iface = picked
    good = ipaddress.IPv6Interface(iface.address)
    taken = {ipaddress.ip_interface(i.address).network for n in ctx.network.nodes for i in n.ifaces}
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
