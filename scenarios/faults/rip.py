"""RIPv2 faults: updates that stop on one link (versions, passive ports, network statements,
MD5 authentication) or from one router (its timers), a LAN left out of RIP, and filters or
offsets that drop a prefix or steer it onto a longer path."""

from __future__ import annotations

import networkx as nx

from netdojo.scenarios.faults.base import (
    FaultContext,
    FaultPlan,
    any_end,
    authenticated_end,
    detours,
    end_fault,
    hosts_in,
    route_test,
    transit_end,
    unannounced_lan,
)
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.hidden_tests import HiddenTest
from netdojo.scenarios.model import Fault, ToolCall, configure
from netdojo.scenarios.network import Network
from netdojo.scenarios.registry import fault
from netdojo.scenarios.rip import REACH, TIMERS, heard_test

LIST_NAMES = ("RIP-IN", "LAN-FILTER", "BLOCK", "RIP-POLICY", "TRIM")
OFFSET_NAMES = ("RIP-OFFSET", "PREFER", "METRIC-ADJ", "BACKUP")
# A slow WAN's template: an update an hour. ripd jitters the interval by up to half, so the
# next update is half an hour away at the soonest, well after any episode; with an update
# every 600 s it could come 300 s after the change, within one.
SLOW_TIMERS = "timers basic 3600 10800 7200"


def _unheard(network: Network, a: str, b: str, tag: str) -> list[HiddenTest]:
    """Updates stop both ways over the link."""
    return [heard_test(network, a, b, False, tag), heard_test(network, b, a, False, tag)]


version_mismatch = fault("rip.version_mismatch", routing={"rip"})(
    end_fault(
        any_end,
        "interface {iface}",
        ["ip rip send version 1", "ip rip receive version 1"],
        ["no ip rip send version", "no ip rip receive version"],
        _unheard,
    )
)
missing_network_transit = fault("rip.missing_network_transit", routing={"rip"})(
    end_fault(any_end, "router rip", ["no network {subnet}"], ["network {subnet}"], _unheard)
)


@fault("rip.passive_transit", routing={"rip"})
def passive_transit(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A transit port made passive: the router still learns over it but sends nothing, so
    its neighbour loses every route through it."""
    if not (picked := transit_end(ctx)):
        return None
    a, b, iface = picked
    return FaultPlan(
        Fault(
            type=tag,
            device=a,
            params={"interface": iface.name, "peer": b},
            inject=[configure(a, "router rip", f"passive-interface {iface.name}")],
            fix=[configure(a, "router rip", f"no passive-interface {iface.name}")],
            present=[heard_test(ctx.network, b, a, False, tag)],
        ),
        Impact(silenced={(a, b)}),
        [heard_test(ctx.network, b, a, True, tag)],
    )


_auth_end = authenticated_end(lambda network: network.rip_auth)


auth_key_mismatch = fault("rip.auth_key_mismatch", routing={"rip"})(
    end_fault(
        _auth_end,
        "interface {iface}",
        ["ip rip authentication string {key}x"],
        ["ip rip authentication string {key}"],
        _unheard,
    )
)
auth_one_side = fault("rip.auth_one_side", routing={"rip"})(
    end_fault(
        _auth_end,
        "interface {iface}",
        ["no ip rip authentication mode"],
        ["ip rip authentication mode md5"],
        _unheard,
    )
)


# A LAN's network statement removed (sometimes retyped for a prefix nobody has).
missing_network_stub = fault("rip.missing_network_stub", routing={"rip"})(
    unannounced_lan("router rip", "network {prefix}", "RIP")
)


def _hop_distances(ctx: FaultContext, target: str) -> dict[str, int]:
    return nx.single_source_shortest_path_length(ctx.router_graph, target)


def _listed(
    device: str, kind: str, name: str, action: str, prefix: str, line: str
) -> tuple[list[ToolCall], list[ToolCall]]:
    """A list ``name`` whose first entry matches ``prefix`` (one that denies it lets the rest
    pass) and the RIP ``line`` that applies it; and their removal, the line first."""
    if kind == "prefix-list":
        entry = f"ip prefix-list {name} seq 5 {action} {prefix}"
        rest = f"ip prefix-list {name} seq 10 permit 0.0.0.0/0 le 32"
        removal = f"no ip prefix-list {name}"
    else:
        entry = f"access-list {name} seq 5 {action} {prefix}"
        rest = f"access-list {name} seq 10 permit any"
        removal = f"no access-list {name}"
    entries = [entry, rest] if action == "deny" else [entry]
    inject = [configure(device, *entries), configure(device, "router rip", line)]
    fix = [configure(device, "router rip", f"no {line}"), configure(device, removal)]
    return inject, fix


@fault("rip.distribute_list", routing={"rip"})
def distribute_list(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A distribute-list that drops a LAN's prefix: inbound on a router from the neighbour it
    routes the LAN through, or outbound on that neighbour towards it."""
    hosts = sorted(ctx.network.lans)
    ctx.rng.shuffle(hosts)
    for host in hosts:
        origin = ctx.network.router_of(host)
        prefix = ctx.network.lans[host]
        distance = _hop_distances(ctx, origin)
        options = [
            (x, n)
            for x in sorted(distance)
            if x != origin
            for n in ctx.router_graph.neighbors(x)
            if distance[n] == distance[x] - 1
        ]
        ctx.rng.shuffle(options)
        for x, n in options:
            outbound = ctx.rng.random() < 0.4
            device, toward = (n, x) if outbound else (x, n)
            iface = ctx.network.node(device).iface_to(toward)
            if not ctx.take(f"route:{x}:{prefix}", f"rip.lists:{device}"):
                continue
            kind = ctx.rng.choice(("access-list", "prefix-list"))
            name = ctx.rng.choice(LIST_NAMES)
            word = "prefix " if kind == "prefix-list" else ""
            direction = "out" if outbound else "in"
            line = f"distribute-list {word}{name} {direction} {iface.name}"
            via = ctx.network.node(n).iface_to(x).address.split("/")[0]
            inject, fix = _listed(device, kind, name, "deny", prefix, line)
            return FaultPlan(
                Fault(
                    type=tag,
                    device=device,
                    params={"prefix": prefix, "interface": iface.name, "list": name},
                    inject=inject,
                    fix=fix,
                    present=[route_test(tag, x, prefix, False, via=via)],
                ),
                Impact(filtered={(n, x, h) for h in hosts_in(ctx.network, prefix)}),
                [route_test(tag, x, prefix, True, via=via)],
            )
    return None


@fault("rip.offset_steering", routing={"rip"})
def offset_steering(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """An offset-list that adds hops to one LAN's prefix on a link of its only shortest path,
    so traffic between two sites takes a longer way round."""
    if not ctx.take(tag):
        return None
    for way in detours(ctx):
        x, y, path, index = way.x, way.y, way.path, way.index
        around = len(way.around) - 1
        if around + 1 > REACH:
            continue
        extra = around - (len(path) - index - 2) + ctx.rng.randint(0, 1)  # hops added
        outbound = ctx.rng.random() < 0.4
        device, toward = (y, x) if outbound else (x, y)
        iface = ctx.network.node(device).iface_to(toward)
        if not ctx.take(f"if:{x}:{iface.name}", f"link:{x}:{y}", f"link:{y}:{x}", *way.keys):
            continue
        if not ctx.take(f"rip.lists:{device}"):
            continue
        prefix = ctx.network.lans[way.target]
        name = ctx.rng.choice(OFFSET_NAMES)
        # ripd adds an inbound offset in place of the port's cost of 1, an outbound one on top
        offset = extra if outbound else extra + 1
        line = f"offset-list {name} {'out' if outbound else 'in'} {offset} {iface.name}"
        via = ctx.network.node(y).iface_to(x).address.split("/")[0]
        inject, fix = _listed(device, "access-list", name, "permit", prefix, line)
        return FaultPlan(
            Fault(
                type=tag,
                device=device,
                params={"prefix": prefix, "interface": iface.name, "offset": offset},
                inject=inject,
                fix=fix,
                present=[route_test(tag, x, prefix, False, via=via)],
            ),
            Impact(prepends={(y, x, h): extra for h in hosts_in(ctx.network, prefix)}),
            [route_test(tag, x, prefix, True, via=via)],
        )
    return None


@fault("rip.timers", routing={"rip"})
def slow_timers(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """One router given a slow WAN's timers (`SLOW_TIMERS`) where every other keeps the
    network's (update 5 s, timeout 15 s): its next update is half an hour away or more, so
    its neighbours time out every route they learnt from it 15 s after its last one, and route
    nothing through it (its LANs are unreachable) until it is back on the network's timers.
    It still hears them, so its own routes stay."""
    graph = ctx.router_graph
    routers = sorted(graph.nodes)
    ctx.rng.shuffle(routers)
    for router in routers:
        neighbours = sorted(graph[router])
        ports = [ctx.network.node(router).iface_to(n).name for n in neighbours]
        keys = [f"rip.timers:{router}", *(f"if:{router}:{port}" for port in ports)]
        keys += [f"link:{router}:{n}" for n in neighbours]
        keys += [f"link:{n}:{router}" for n in neighbours]
        if not neighbours or not ctx.take(*keys):
            continue
        return FaultPlan(
            Fault(
                type=tag,
                device=router,
                params={"timers": SLOW_TIMERS.removeprefix("timers basic ")},
                inject=[configure(router, "router rip", f" {SLOW_TIMERS}")],
                fix=[configure(router, "router rip", f" {TIMERS}")],
                present=[heard_test(ctx.network, n, router, False, tag) for n in neighbours],
            ),
            Impact(silenced={(router, n) for n in neighbours}),
            [heard_test(ctx.network, n, router, True, tag) for n in neighbours],
        )
    return None
