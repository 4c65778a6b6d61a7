"""The networks RIP families draw: small enough in hops for RIP, one link authenticated."""

from __future__ import annotations

import random

from netdojo.scenarios.network import Network, plan_network
from netdojo.scenarios.registry import ScenarioError
from netdojo.scenarios.topology import Topology, make_topology

MAX_HOPS = 12  # the longest path between routers with any one link lost: RIP reaches 14
REDRAWS = 50


def hop_span(topology: Topology) -> int:
    """The most hops between two routers that stay connected when any one link is lost."""
    neighbours: dict[str, set[str]] = {router: set() for router in topology.routers}
    for a, b in topology.links:
        neighbours[a].add(b)
        neighbours[b].add(a)
    worst = 0
    for start in topology.routers:
        farthest, tree = _search(neighbours, start, frozenset())
        # A link lost off the search tree leaves every distance from ``start`` as it was.
        worst = max(worst, farthest, *(_search(neighbours, start, link)[0] for link in tree))
    return worst


def _search(
    neighbours: dict[str, set[str]], start: str, lost: frozenset[str]
) -> tuple[int, list[frozenset[str]]]:
    """A breadth-first search from ``start`` without the link ``lost``: how many hops away the
    farthest router it reaches is, and the links it reached routers over."""
    seen, frontier, hops, tree = {start}, [start], -1, []
    while frontier:
        hops += 1
        following = []
        for router in frontier:
            for n in neighbours[router]:
                if n not in seen and not (router in lost and n in lost):
                    seen.add(n)
                    following.append(n)
                    tree.append(frozenset((router, n)))
        frontier = following
    return hops, tree


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
