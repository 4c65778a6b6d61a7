"""iBGP over an OSPF underlay: a core AS whose routers peer in a full mesh between loopbacks,
with external ASes attached to border routers (the faults of that design are in `faults.ibgp`).

OSPF carries only the core's links and loopbacks; every LAN is announced in BGP, so a core
router forwards to a remote LAN only through a usable BGP route (see `forwarding._Ibgp`).
"""

from __future__ import annotations

import random

from netdojo.scenarios.network import HOSTS_BY_LEVEL, Network, plan_network
from netdojo.scenarios.topology import Topology

EXTERNAL_PREFIXES = ("isp", "peer", "ext", "transit")


def with_externals(
    core: Topology, level: int, rng: random.Random
) -> tuple[Topology, list[str], list[str]]:
    """The core plus external routers on single links, and the routers that get hosts:
    every external one and a few of the core."""
    count = rng.randint(1, 2) if level == 1 else level
    borders = sorted(rng.sample(core.routers, min(count, len(core.routers))))
    prefix = rng.choice(EXTERNAL_PREFIXES)
    externals = [f"{prefix}{k + 1}" for k in range(len(borders))]
    links = [*core.links, *zip(borders, externals, strict=True)]
    inside = min(len(core.routers), max(2, HOSTS_BY_LEVEL[level] - 1))
    hosted = sorted(rng.sample(core.routers, inside)) + externals
    topology = Topology(shape=core.shape, routers=sorted(core.routers + externals), links=links)
    return topology, externals, hosted


def as_ibgp(network: Network, externals: list[str], rng: random.Random) -> Network:
    """The network with one AS for the core and the planned AS for each external router."""
    taken = {network.node(e).asn for e in externals}
    core_as = rng.choice([asn for asn in range(64600, 64700) if asn not in taken])
    nodes = [
        node
        if node.name in externals or node.role == "host"
        else node.model_copy(update={"asn": core_as})
        for node in network.nodes
    ]
    return network.model_copy(update={"nodes": nodes, "core_as": core_as, "externals": externals})


def plan_ibgp(core: Topology, level: int, rng: random.Random) -> Network:
    """The network of an iBGP family: the core's plan, external routers and their hosts."""
    topology, externals, hosted = with_externals(core, level, rng)
    return as_ibgp(plan_network(topology, level, rng, 0, hosted), externals, rng)
