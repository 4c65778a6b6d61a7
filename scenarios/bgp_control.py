"""BGP faults of the control plane: a wrong peer AS, a policy requirement with no policy, and
policies that steer traffic off the intended exit while everything stays reachable.

In these labs every router is its own AS, so a route's AS path is its hop count and the
intended path between two sites is the unique shortest one.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import networkx as nx

from netdojo.scenarios.faults import (
    FaultContext,
    FaultPlan,
    Injector,
    absent_line_probe,
    bgp_end,
    route_probe,
    session_probe,
)
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.model import Fault, configure, execute
from netdojo.scenarios.network import Network


def address_towards(network: Network, router: str, peer: str) -> str:
    """The address of ``peer`` on its link with ``router``."""
    return network.node(peer).iface_to(router).address.split("/")[0]


def wrong_remote_as(ctx: FaultContext) -> FaultPlan | None:
    """One end expects the wrong peer AS: every OPEN fails with Bad Peer AS.

    Each failed OPEN doubles FRR's idle timer, so the fix clears the session as well.
    """
    if not (picked := bgp_end(ctx)):
        return None
    a, b, address, own, peer_as = picked
    step = 10 * ctx.rng.randint(1, 5)
    wrong = peer_as + step if peer_as + step <= 65534 else peer_as - step
    head = f"router bgp {own}"
    tag = "bgp.wrong_remote_as"
    return FaultPlan(
        Fault(
            type=tag,
            device=a,
            params={"peer": address, "wrong": wrong, "intended": peer_as},
            inject=[configure(a, head, f"neighbor {address} remote-as {wrong}")],
            fix=[
                configure(a, head, f"neighbor {address} remote-as {peer_as}"),
                execute(a, f"clear bgp {address}"),
            ],
            present=[session_probe(ctx.network, a, b, False, tag)],
        ),
        Impact(down_links={frozenset((a, b))}),
        [session_probe(ctx.network, a, b, True, tag)],
    )


def requires_policy(ctx: FaultContext) -> FaultPlan | None:
    """`bgp ebgp-requires-policy` with no policy: sessions stay up but carry no routes.

    The setting is not retroactive, so injection and fix both end with a soft clear.
    """
    if ctx.routing != "bgp":
        return None
    routers = sorted(r.name for r in ctx.network.routers)
    ctx.rng.shuffle(routers)
    router = next((r for r in routers if ctx.take(f"bgp.policy:{r}")), None)
    if router is None:
        return None
    head = f"router bgp {ctx.network.node(router).asn}"
    peers = sorted(ctx.network.router_graph().neighbors(router))
    hosts = sorted(ctx.network.lans)
    filtered = {(router, p, h) for p in peers for h in hosts}
    filtered |= {(p, router, h) for p in peers for h in hosts}
    tag = "bgp.requires_policy"
    line = "no bgp ebgp-requires-policy"
    present = absent_line_probe(
        tag,
        router,
        line,
        f"{router} requires a policy on its eBGP sessions",
    )
    soft = execute(router, "clear bgp * soft")
    return FaultPlan(
        Fault(
            type=tag,
            device=router,
            params={},
            inject=[configure(router, head, "bgp ebgp-requires-policy"), soft],
            fix=[configure(router, head, line), soft],
            present=[present],
        ),
        Impact(filtered=filtered),
        [],
    )


class ExitChoice(NamedTuple):
    """Traffic from ``origin`` to ``host`` leaves ``source`` towards ``intended``; steering
    can push it to ``other`` instead."""

    origin: str
    host: str
    prefix: str
    source: str
    intended: str
    other: str


def exit_choice(ctx: FaultContext, slack: int) -> ExitChoice | None:
    """A site pair whose traffic can be steered at its source router.

    The intended path is the unique shortest one; every best path of the alternative next
    router avoids the source; ``slack`` bounds how much longer the alternative may be.
    """
    graph = ctx.network.router_graph()
    pairs = list(itertools.permutations(sorted(ctx.network.lans), 2))
    ctx.rng.shuffle(pairs)
    for a, b in pairs:
        source, target = ctx.network.router_of(a), ctx.network.router_of(b)
        if source == target:
            continue
        paths = list(nx.all_shortest_paths(graph, source, target))
        if len(paths) != 1:
            continue
        intended, distance = paths[0][1], len(paths[0]) - 1
        for other in sorted(graph.neighbors(source)):
            if other == intended:
                continue
            around = nx.shortest_path_length(graph, other, target)
            if around >= 1 + distance or 1 + around - distance > slack:
                continue  # a best path of the alternative could come back through the source
            if ctx.take(f"bgp.exit:{source}", f"bgp.exit:{intended}"):
                return ExitChoice(a, b, ctx.network.lans[b], source, intended, other)
    return None


def prefix_route_map(name: str, prefix: str, setting: str) -> list[str]:
    """Route-map ``name``: ``setting`` on ``prefix`` (matched by prefix-list ``name``-NETS),
    every other route passed unchanged."""
    return [
        f"ip prefix-list {name}-NETS seq 5 permit {prefix}",
        f"route-map {name} permit 10",
        f" match ip address prefix-list {name}-NETS",
        f" {setting}",
        "exit",
        f"route-map {name} permit 20",
        "exit",
    ]


def bgp_head(network: Network, router: str) -> list[str]:
    """The lines that enter ``router``'s IPv4 unicast BGP configuration."""
    return [f"router bgp {network.node(router).asn}", "address-family ipv4 unicast"]


def _steering_plan(
    ctx: FaultContext,
    tag: str,
    device: str,
    neighbour: str,
    setting: str,
    choice: ExitChoice,
    impact: Impact,
) -> FaultPlan:
    """A route-map that applies ``setting`` to the chosen LAN, attached on ``device`` to its
    session with ``neighbour`` (``in`` at the source, ``out`` elsewhere)."""
    source, prefix = choice.source, choice.prefix
    via = address_towards(ctx.network, source, choice.intended)
    peer = address_towards(ctx.network, device, neighbour)
    direction = "in" if device == source else "out"
    name = f"{ctx.rng.choice(STEERING_NAMES[direction])}-{neighbour.upper()}"
    applied = f"neighbor {peer} route-map {name} {direction}"
    head = bgp_head(ctx.network, device)
    return FaultPlan(
        Fault(
            type=tag,
            device=device,
            params={"prefix": prefix, "intended_via": via},
            inject=[configure(device, *prefix_route_map(name, prefix, setting), *head, applied)],
            fix=[configure(device, *head, f"no {applied}")],
            present=[route_probe(tag, source, prefix, False, via=via)],
        ),
        impact,
        [route_probe(tag, source, prefix, True, via=via)],
    )


STEERING_NAMES = {"in": ("PREFER", "LP", "PRIMARY"), "out": ("PREPEND", "PAD", "DEPREF")}
PREPENDS = 3
LOCAL_PREF = "set local-preference 200"
LOCAL_PREF_SLACK = 8  # a local preference outweighs an AS path of any length


def local_pref_steering(ctx: FaultContext) -> FaultPlan | None:
    """An inbound route-map raises local preference on a longer path to one site."""
    if ctx.routing != "bgp" or not (picked := exit_choice(ctx, slack=LOCAL_PREF_SLACK)):
        return None
    tag = "bgp.local_pref_steering"
    impact = Impact(preferred={picked.source: {picked.host: picked.other}})
    return _steering_plan(ctx, tag, picked.source, picked.other, LOCAL_PREF, picked, impact)


def as_path_prepend_steering(ctx: FaultContext) -> FaultPlan | None:
    """The intended next router prepends its AS towards the source, pushing traffic around."""
    if ctx.routing != "bgp" or not (picked := exit_choice(ctx, slack=PREPENDS - 1)):
        return None
    asn = ctx.network.node(picked.intended).asn
    setting = f"set as-path prepend {' '.join([str(asn)] * PREPENDS)}"
    tag = "bgp.as_path_prepend_steering"
    impact = Impact(prepends={(picked.intended, picked.source, picked.host): PREPENDS})
    return _steering_plan(ctx, tag, picked.intended, picked.source, setting, picked, impact)


BGP_CONTROL_INJECTORS: dict[str, Injector] = {
    "bgp.wrong_remote_as": wrong_remote_as,
    "bgp.requires_policy": requires_policy,
    "bgp.local_pref_steering": local_pref_steering,
    "bgp.as_path_prepend_steering": as_path_prepend_steering,
}
