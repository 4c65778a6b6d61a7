"""iBGP over an OSPF underlay: a core AS whose routers peer in a full mesh between loopbacks,
with external ASes attached to border routers, and the faults of that design.

OSPF carries only the core's links and loopbacks; every LAN is announced in BGP, so a core
router forwards to a remote LAN only through a usable BGP route (see `forwarding._Ibgp`).
"""

from __future__ import annotations

import random

from netdojo.scenarios.faults import (
    FaultContext,
    FaultPlan,
    Injector,
    absent_line_probe,
    router_id,
)
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.model import Fault, Probe, configure
from netdojo.scenarios.network import HOSTS_BY_LEVEL, Network
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


def _core(network: Network) -> list[str]:
    return sorted(r.name for r in network.routers if network.internal(r.name))


def _mesh_peers(network: Network, router: str) -> list[str]:
    return [router_id(network, r) for r in _core(network) if r != router]


def _ibgp_session(network: Network, a: str, b: str, expect: bool, tag: str) -> Probe:
    state = "is" if expect else "is not"
    return Probe(
        id=f"{tag}:ibgp:{a}-{b}",
        description=f"{a}'s iBGP session with {b} ({router_id(network, b)}) {state} Established",
        kind="bgp_session",
        device=a,
        params={"peer": router_id(network, b), "expect": expect},
    )


def next_hop_self_missing(ctx: FaultContext) -> FaultPlan | None:
    """A border stops rewriting the next hop: its external routes are unusable in the core."""
    if ctx.routing != "ibgp":
        return None
    network = ctx.network
    borders = sorted(network.node(e).ifaces[0].peer for e in network.externals)
    ctx.rng.shuffle(borders)
    border = next((b for b in borders if ctx.take(f"bgp.nhs:{b}")), None)
    if border is None:
        return None
    peers = _mesh_peers(network, border)
    head = (f"router bgp {network.core_as}", "address-family ipv4 unicast")
    tag = "bgp.next_hop_self_missing"
    line = f"neighbor {peers[0]} next-hop-self"
    return FaultPlan(
        Fault(
            type=tag,
            device=border,
            params={"peers": peers},
            inject=[configure(border, *head, *(f"no neighbor {p} next-hop-self" for p in peers))],
            fix=[configure(border, *head, *(f"neighbor {p} next-hop-self" for p in peers))],
            present=[
                absent_line_probe(
                    tag,
                    border,
                    line,
                    f"{border} does not set itself as next hop towards the core",
                )
            ],
        ),
        Impact(no_next_hop_self={border}),
        [],
    )


def update_source_missing(ctx: FaultContext) -> FaultPlan | None:
    """Both ends of one iBGP session lose `update-source lo`: each connects from an interface
    address the other does not know (one end alone would heal: the other still connects)."""
    if ctx.routing != "ibgp":
        return None
    network = ctx.network
    core = _core(network)
    pairs = [(a, b) for a in core for b in core if a < b]
    ctx.rng.shuffle(pairs)
    for a, b in pairs:
        if not ctx.take(f"bgp.ibgp:{a}:{b}"):
            continue
        head = f"router bgp {network.core_as}"
        to_b, to_a = router_id(network, b), router_id(network, a)
        tag = "bgp.update_source_missing"
        return FaultPlan(
            Fault(
                type=tag,
                device=a,
                params={"peer": b},
                inject=[
                    configure(a, head, f"no neighbor {to_b} update-source lo"),
                    configure(b, head, f"no neighbor {to_a} update-source lo"),
                ],
                fix=[
                    configure(a, head, f"neighbor {to_b} update-source lo"),
                    configure(b, head, f"neighbor {to_a} update-source lo"),
                ],
                present=[_ibgp_session(network, a, b, False, tag)],
            ),
            Impact(down_sessions={frozenset((a, b))}),
            [_ibgp_session(network, a, b, True, tag)],
        )
    return None


def missing_loopback(ctx: FaultContext) -> FaultPlan | None:
    """A core router's loopback leaves the underlay: every iBGP session to it drops."""
    if ctx.routing != "ibgp":
        return None
    network = ctx.network
    core = _core(network)
    ctx.rng.shuffle(core)
    router = next((r for r in core if ctx.take(f"ospf.loopback:{r}")), None)
    if router is None:
        return None
    line = f"network {router_id(network, router)}/32 area 0"
    tag = "ospf.missing_loopback"
    others = [r for r in _core(network) if r != router]
    return FaultPlan(
        Fault(
            type=tag,
            device=router,
            params={"loopback": router_id(network, router)},
            inject=[configure(router, "router ospf", f"no {line}")],
            fix=[configure(router, "router ospf", line)],
            present=[
                absent_line_probe(
                    tag,
                    router,
                    line,
                    f"{router} does not announce its loopback in OSPF",
                )
            ],
        ),
        Impact(down_sessions={frozenset((router, other)) for other in others}),
        [_ibgp_session(network, other, router, True, tag) for other in others[:2]],
    )


IBGP_INJECTORS: dict[str, Injector] = {
    "bgp.next_hop_self_missing": next_hop_self_missing,
    "bgp.update_source_missing": update_source_missing,
    "ospf.missing_loopback": missing_loopback,
}
