"""Exits that BGP policy can steer: a site pair whose traffic leaves its source router towards
the next router of the unique shortest AS path, and a neighbour it could leave through instead.

In these labs every router is its own AS, so a route's AS path is its hop count. The
steering faults (`faults.bgp_control`) push traffic onto such an exit; the preferred-exit
intent (`exit_intent`) asks for it.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import networkx as nx

from netdojo.scenarios.faults.base import FaultContext, sole_shortest_paths
from netdojo.scenarios.network import Network

STEERING_NAMES = {"in": ("PREFER", "LP", "PRIMARY"), "out": ("PREPEND", "PAD", "DEPREF")}
LOCAL_PREF = "set local-preference 200"
LOCAL_PREF_SLACK = 8  # a local preference outweighs an AS path of any length


def address_towards(network: Network, router: str, peer: str) -> str:
    """The address of ``peer`` on its link with ``router``."""
    return network.node(peer).iface_to(router).address.split("/")[0]


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
    graph = ctx.router_graph
    pairs = list(itertools.permutations(sorted(ctx.network.lans), 2))
    ctx.rng.shuffle(pairs)
    sole: dict[str, dict[str, list[str]]] = {}  # target -> source -> its only shortest path
    for a, b in pairs:
        source, target = ctx.network.router_of(a), ctx.network.router_of(b)
        if target not in sole:
            sole[target] = sole_shortest_paths(graph.adj, target)
        if source == target or source not in sole[target]:
            continue
        path = sole[target][source]
        intended, distance = path[1], len(path) - 1
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
