"""Multi-area OSPF: the area plan (the faults that only exist with areas or externals are in
`faults.multiarea`).

The plan is for tree-shaped router graphs: one router is the backbone's core, its links are
area 0, and each of its neighbours is an area border router for the subtree behind it. Every
path is the tree path, so the forwarding model of single-area OSPF holds. About half of the
host LANs are announced as externals (`redistribute connected` through a route-map) instead of
with `network` statements.
"""

from __future__ import annotations

import random

import networkx as nx

from netdojo.scenarios.network import Network, plan_network
from netdojo.scenarios.topology import Topology


def plan_areas(network: Network, rng: random.Random) -> Network:
    """The network with an area per subtree of a seeded core router and redistributed LANs.

    The core is one with at least one area that carries transit links, not just LANs."""
    graph = network.router_graph()
    if not nx.is_tree(graph):
        raise ValueError("a multi-area plan needs a tree of routers")
    core = rng.choice([r for r in sorted(graph.nodes) if _has_area_transit(graph, r)])
    borders = sorted(graph.neighbors(core))
    area_ids = rng.sample(range(1, 100), len(borders))
    router_area = {core: 0}
    for border, area in zip(borders, area_ids, strict=True):
        below = nx.node_connected_component(graph.subgraph(set(graph.nodes) - {core}), border)
        router_area.update(dict.fromkeys(below, area))
    link_areas: dict[str, int] = {}
    for link, ends in network.links:
        routers = [d for d, _ in ends if network.node(d).role == "router"]
        if core not in routers:
            link_areas[link] = router_area[routers[0]]
    lans = sorted(link for link, _ in network.links if link.startswith("lan"))
    redistributed = sorted(rng.sample(lans, max(1, len(lans) // 2)))
    loopback_areas = {r: a for r, a in router_area.items() if r not in borders and a}
    return network.model_copy(
        update={
            "ospf_areas": {k: v for k, v in link_areas.items() if v},
            "router_areas": loopback_areas,
            "redistributed": redistributed,
        }
    )


def _has_area_transit(graph: nx.Graph, core: str) -> bool:
    """Whether some area behind ``core`` would hold a router-to-router link."""
    rest = graph.subgraph(set(graph.nodes) - {core})
    return any(len(nx.node_connected_component(rest, n)) > 1 for n in graph.neighbors(core))


def plan_multiarea(topology: Topology, level: int, rng: random.Random) -> Network:
    """The standard network plan, then its areas and redistributed LANs."""
    return plan_areas(plan_network(topology, level, rng), rng)
