"""Faults of eBGP over IPv6: a neighbour left out of the IPv6 unicast family, a LAN no longer
announced there, a wrong peer AS, next hops rewritten to addresses nobody has (global and
link-local), an inbound IPv6 prefix-list that drops a remote LAN, and a LAN port that stops
advertising itself to its host.

Each is written the way an operator would get it wrong, under `router bgp` and its
`address-family ipv6 unicast`. Taking a neighbour out of (or back into) the IPv6 family
changes the capabilities the session was opened with, so FRR resets the session by itself.

Between directly connected peers FRR sends a global and a link-local next hop and forwards
through the link-local one; the global one is then not even checked. So an outbound
`set ipv6 next-hop global` to a dead address changes nothing (seen on a live lab): the
unusable global next hop is a receiver's inbound policy that also prefers the global one,
and the broken outbound rewrite is of the link-local next hop.
"""

from __future__ import annotations

import ipaddress

import networkx as nx

from netdojo.scenarios.faults import bgp_control
from netdojo.scenarios.faults.base import (
    FaultContext,
    FaultPlan,
    absent_line_test,
    bgp_end,
    config_line_test,
    hosts_in,
    lan_port,
    session_test,
    subnet_of,
)
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.hidden_tests import DefaultRouteParams, DefaultRouteTest
from netdojo.scenarios.ipv6_bgp import bgp6_head
from netdojo.scenarios.model import Fault, configure
from netdojo.scenarios.registry import fault

NOWHERE = "2001:db8:ffff::"  # a /48 no plan uses: transit /48s are 2001:db8:0 to 2001:db8:200
SHIFTS = (1, 2, 0x10, 0x100)  # how many /64s away a mistyped LAN prefix lands
IMPORT_NAMES = ("IMPORT", "FROM", "IN")
NEXT_HOP_NAMES = ("NH-POLICY", "SET-NH", "NEXT-HOP")


@fault("v6bgp.af_not_activated", routing={"bgp6"})
def af_not_activated(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """One end of a session no longer activates its neighbour in IPv6 unicast: the session
    comes back up without the family, and no IPv6 prefix crosses it either way."""
    if not (picked := bgp_end(ctx)):
        return None
    a, b, address, _, _ = picked
    line = f"neighbor {address} activate"
    head = bgp6_head(ctx.network, a)
    link = frozenset((a, b))
    return FaultPlan(
        Fault(
            type=tag,
            device=a,
            params={"peer": address},
            inject=[configure(a, *head, f"no {line}")],
            fix=[configure(a, *head, line)],
            present=[
                absent_line_test(tag, a, line, f"{a} does not activate {address} in IPv6 unicast")
            ],
        ),
        Impact(down_links={link}, idle_links={link}),
        [session_test(ctx.network, a, b, True, tag)],
    )


def _mistyped(ctx: FaultContext, prefix: str) -> str | None:
    """A /64 a few /64s away from ``prefix`` that is no other LAN; None when none is free."""
    good = ipaddress.IPv6Network(prefix)
    lans = {ipaddress.ip_network(p) for p in ctx.network.lans.values()}
    shifts = list(SHIFTS)
    ctx.rng.shuffle(shifts)
    for shift in shifts:
        wrong = ipaddress.IPv6Network(f"{good.network_address + (shift << 64)}/64")
        if wrong not in lans:
            return str(wrong)
    return None


@fault("v6bgp.lan_unannounced", routing={"bgp6"})
def lan_unannounced(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A LAN's `network` statement gone from the IPv6 family, sometimes retyped for a /64
    nobody has: the host reaches its gateway, no other router learns its LAN."""
    if not (picked := lan_port(ctx)):
        return None
    router, host, iface = picked
    subnet = subnet_of(iface)
    line = f"network {subnet}"
    inject, fix = [f"no {line}"], [line]
    typo = _mistyped(ctx, subnet)
    if typo is not None and ctx.rng.random() < 0.5:
        inject, fix = [*inject, f"network {typo}"], [f"no network {typo}", *fix]
    head = bgp6_head(ctx.network, router)
    present = absent_line_test(tag, router, line, f"{router} does not announce {subnet} in BGP")
    return FaultPlan(
        Fault(
            type=tag,
            device=router,
            params={"prefix": subnet},
            inject=[configure(router, *head, *inject)],
            fix=[configure(router, *head, *fix)],
            present=[present],
        ),
        Impact(unannounced={host}),
        [],
    )


remote_as_wrong = fault("v6bgp.remote_as_wrong", routing={"bgp6"})(
    bgp_control.wrong_remote_as.injector  # the same mistake, between IPv6 addresses
)


def _only_through(ctx: FaultContext, receiver: str, sender: str) -> list[str]:
    """The hosts whose LAN ``receiver`` learns on its shortest AS paths from ``sender`` alone."""
    graph = ctx.router_graph
    hosts = []
    for host in sorted(ctx.network.lans):
        target = ctx.network.router_of(host)
        if target == receiver:
            continue
        distance = nx.single_source_shortest_path_length(graph, target)
        nearest = min(distance[n] for n in graph.neighbors(receiver))
        if [n for n in graph.neighbors(receiver) if distance[n] == nearest] == [sender]:
            hosts.append(host)
    return hosts


@fault("v6bgp.nexthop_unreachable", routing={"bgp6"})
def nexthop_unreachable(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """An inbound route-map on one end prefers the global IPv6 next hop of what its peer
    sends, and sets that next hop to an address nobody has: the routes arrive but are invalid
    (next hop inaccessible), so none is used or passed on."""
    if not (picked := bgp_end(ctx)):
        return None
    receiver, sender, address, _, _ = picked
    hop = ipaddress.IPv6Address(NOWHERE) + ctx.rng.randint(1, 0xFFF)
    name = f"{ctx.rng.choice(NEXT_HOP_NAMES)}-{sender.upper()}"
    applied = f"neighbor {address} route-map {name} in"
    policy = [
        f"route-map {name} permit 10",
        f" set ipv6 next-hop global {hop}",
        " set ipv6 next-hop prefer-global",
        "exit",
    ]
    head = bgp6_head(ctx.network, receiver)
    return FaultPlan(
        Fault(
            type=tag,
            device=receiver,
            params={"peer": address, "route-map": name, "next_hop": str(hop)},
            inject=[configure(receiver, *policy, *head, applied)],
            fix=[configure(receiver, *head, f"no {applied}")],
            present=[config_line_test(tag, receiver, applied)],
        ),
        Impact(filtered={(sender, receiver, h) for h in ctx.network.lans}),
        [],
    )


@fault("v6bgp.linklocal_nexthop", routing={"bgp6"})
def linklocal_nexthop(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """An outbound route-map on one end rewrites the link-local next hop of a LAN it sends its
    peer to a link-local address no port has. The peer installs the route through it (FRR
    forwards through a directly connected peer's link-local next hop), finds no neighbour
    there and drops the LAN's traffic; the control plane looks healthy."""
    if not (picked := bgp_end(ctx)):
        return None
    receiver, sender, _, _, _ = picked
    if not (hosts := _only_through(ctx, receiver, sender)):
        return None
    prefix = ctx.network.lans[ctx.rng.choice(hosts)]
    address = ctx.network.node(receiver).iface_to(sender).address.split("/")[0]
    hop = f"fe80::{ctx.rng.randint(1, 0xFF):x}:{ctx.rng.randint(1, 0xFFFF):x}"
    name = f"{ctx.rng.choice(NEXT_HOP_NAMES)}-{receiver.upper()}"
    applied = f"neighbor {address} route-map {name} out"
    policy = [
        f"ipv6 prefix-list {name} seq 5 permit {prefix}",
        f"route-map {name} permit 10",
        f" match ipv6 address prefix-list {name}",
        f" set ipv6 next-hop local {hop}",
        "exit",
        f"route-map {name} permit 20",
        "exit",
    ]
    head = bgp6_head(ctx.network, sender)
    return FaultPlan(
        Fault(
            type=tag,
            device=sender,
            params={"peer": address, "prefix": prefix, "route-map": name, "next_hop": hop},
            inject=[configure(sender, *policy, *head, applied)],
            fix=[configure(sender, *head, f"no {applied}")],
            present=[config_line_test(tag, sender, applied)],
        ),
        Impact(drops={receiver: hosts_in(ctx.network, prefix)}),
        [],
    )


@fault("v6bgp.prefix_filtered", routing={"bgp6"})
def prefix_filtered(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """An inbound IPv6 prefix-list on one end of a session drops a remote LAN's /64 the far
    side sends it (and passes the rest)."""
    if not (picked := bgp_end(ctx)):
        return None
    receiver, sender, address, _, _ = picked
    if not (hosts := _only_through(ctx, receiver, sender)):
        return None
    prefix = ctx.network.lans[ctx.rng.choice(hosts)]
    name = f"{ctx.rng.choice(IMPORT_NAMES)}-{sender.upper()}"
    applied = f"neighbor {address} prefix-list {name} in"
    head = bgp6_head(ctx.network, receiver)
    prefix_list = [
        f"ipv6 prefix-list {name} seq 5 deny {prefix}",
        f"ipv6 prefix-list {name} seq 10 permit ::/0 le 128",
    ]
    return FaultPlan(
        Fault(
            type=tag,
            device=receiver,
            params={"peer": address, "prefix": prefix, "prefix-list": name},
            inject=[configure(receiver, *prefix_list, *head, applied)],
            fix=[configure(receiver, *head, f"no {applied}")],
            present=[config_line_test(tag, receiver, applied)],
        ),
        Impact(filtered={(sender, receiver, h) for h in hosts_in(ctx.network, prefix)}),
        [],
    )


@fault("v6bgp.ra_suppressed", routing={"bgp6"})
def ra_suppressed(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A router's LAN port stops sending router advertisements (`ipv6 nd suppress-ra`): its
    last one withdraws the router as default gateway, so the host keeps its address but has
    no way off its LAN."""
    if not (picked := lan_port(ctx)):
        return None
    router, host, iface = picked
    head = f"interface {iface.name}"
    present = DefaultRouteTest(
        id=f"{tag}:{host}",
        description=f"{host} has no default route",
        device=host,
        params=DefaultRouteParams(gateway=None),
    )
    return FaultPlan(
        Fault(
            type=tag,
            device=router,
            params={"interface": iface.name},
            inject=[configure(router, head, "ipv6 nd suppress-ra")],
            fix=[configure(router, head, "no ipv6 nd suppress-ra")],
            present=[present],
        ),
        Impact(isolated={host}),
        [],
    )
