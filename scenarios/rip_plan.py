"""The networks RIP families draw: small enough in hops for RIP, one link authenticated."""

from __future__ import annotations

import random

import networkx as nx

from netdojo.scenarios.network import Network, plan_network
from netdojo.scenarios.registry import ScenarioError
from netdojo.scenarios.topology import Topology, make_topology

MAX_HOPS = 12  # the longest path between routers with any one link lost: RIP reaches 14
REDRAWS = 50


def hop_span(topology: Topology) -> int:
    """The most hops between two routers that stay connected when any one link is lost."""
    graph = topology.graph()
    worst = 0
    for edge in [None, *graph.edges]:
        cut = graph.copy()
        if edge is not None:
            cut.remove_edge(*edge)
        for part in nx.connected_components(cut):
            worst = max(worst, nx.diameter(cut.subgraph(part)))
    return worst


def plan_rip(topology: Topology, level: int, rng: random.Random) -> Network:
    """A network on ``topology``, or on another of its shape and size when paths in it are
    too long for RIP's metric; the link the plan authenticates carries RIP's MD5."""
    for _ in range(REDRAWS):
        if hop_span(topology) <= MAX_HOPS:
            break
        topology = make_topology(topology.shape, len(topology.routers), rng.randrange(2**31))
    else:
        raise ScenarioError(f"no {topology.shape} of {len(topology.routers)} routers fits RIP")
    network = plan_network(topology, level, rng)
    keys = {link: key.replace("ospf", "rip") for link, key in network.ospf_md5.items()}
    return network.model_copy(update={"rip_auth": keys, "ospf_md5": {}})


def plan_rip_build(topology: Topology, level: int, rng: random.Random) -> Network:
    """A RIP network to build: as `plan_rip`, with no link authenticated."""
    return plan_rip(topology, level, rng).model_copy(update={"rip_auth": {}})
