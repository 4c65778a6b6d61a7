"""Multi-area OSPF: the area plan, and the faults that only exist with areas or externals.

The plan is for tree-shaped router graphs: one router is the backbone's core, its links are
area 0, and each of its neighbours is an area border router for the subtree behind it. Every
path is the tree path, so the forwarding model of single-area OSPF holds. About half of the
host LANs are announced as externals (`redistribute connected` through a route-map) instead of
with `network` statements.
"""

from __future__ import annotations

import ipaddress
import random

import networkx as nx

from netdojo.scenarios.faults import (
    FaultContext,
    FaultPlan,
    Injector,
    absent_line_probe,
    adjacency_probe,
    config_line_probe,
    link_down,
    router_id,
)
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.model import Fault, configure, execute
from netdojo.scenarios.network import REDISTRIBUTION, Network


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


def _area_links(network: Network, router: str, area: int) -> list[str]:
    """The routers ``router`` reaches over transit links in ``area``."""
    node = network.node(router)
    return sorted(
        i.peer
        for i in node.ifaces
        if network.node(i.peer).role == "router" and network.ospf_areas.get(i.link, 0) == area
    )


def _asbr(network: Network, router: str) -> bool:
    return any(i.link in network.redistributed for i in network.node(router).ifaces)


def stub_area_mismatch(ctx: FaultContext) -> FaultPlan | None:
    """One router declares its non-backbone area a stub: every adjacency it has there drops."""
    network = ctx.network
    candidates = sorted(
        (router.name, area)
        for router in network.routers
        for area in {network.ospf_areas.get(i.link, 0) for i in router.ifaces}
        if area and _area_links(network, router.name, area) and not _asbr(network, router.name)
    )
    ctx.rng.shuffle(candidates)
    for router, area in candidates:
        peers = _area_links(network, router, area)
        keys = [f"link:{a}:{b}" for p in peers for a, b in ((router, p), (p, router))]
        if not ctx.take(f"ospf.area:{router}", *keys):
            continue
        tag = "ospf.stub_area_mismatch"
        return FaultPlan(
            Fault(
                type=tag,
                device=router,
                params={"area": area},
                inject=[configure(router, "router ospf", f"area {area} stub")],
                fix=[configure(router, "router ospf", f"no area {area} stub")],
                present=[adjacency_probe(network, router, peers[0], False, tag)],
            ),
            Impact(down_links={frozenset((router, p)) for p in peers}),
            [adjacency_probe(network, router, p, True, tag) for p in peers],
        )
    return None


def _redistributed_lan(ctx: FaultContext) -> tuple[str, str, str] | None:
    """A LAN announced as an external, not yet faulted: (router, host, prefix)."""
    hosts = sorted(ctx.network.lans)
    ctx.rng.shuffle(hosts)
    for host in hosts:
        router = ctx.network.router_of(host)
        iface = ctx.network.node(router).iface_to(host)
        if iface.link in ctx.network.redistributed and ctx.take(
            f"if:{router}:{iface.name}", f"host:{host}", f"redistribute:{router}"
        ):
            return router, host, str(ipaddress.ip_interface(iface.address).network)
    return None


def missing_redistribution(ctx: FaultContext) -> FaultPlan | None:
    """The `redistribute connected` line is gone: the router's external LANs vanish."""
    if not (picked := _redistributed_lan(ctx)):
        return None
    router, _, _ = picked
    line = f"redistribute connected route-map {REDISTRIBUTION[1]}"
    hosts = {
        h
        for h in ctx.network.lans
        if ctx.network.router_of(h) == router
        and ctx.network.node(router).iface_to(h).link in ctx.network.redistributed
    }
    tag = "ospf.missing_redistribution"
    present = absent_line_probe(
        tag,
        router,
        line,
        f"{router} does not redistribute its connected LANs into OSPF",
    )
    return FaultPlan(
        Fault(
            type=tag,
            device=router,
            params={"route_map": REDISTRIBUTION[1]},
            inject=[configure(router, "router ospf", f"no {line}")],
            fix=[configure(router, "router ospf", line)],
            present=[present],
        ),
        Impact(unannounced=hosts),
        [],
    )


def redistribution_filter(ctx: FaultContext) -> FaultPlan | None:
    """A typo in the prefix-list behind the redistribution drops one LAN."""
    if not (picked := _redistributed_lan(ctx)):
        return None
    router, host, prefix = picked
    node = ctx.network.node(router)
    lans = [i for i in node.ifaces if i.link in ctx.network.redistributed]
    seq = 5 * (1 + [i.peer for i in lans].index(host))
    octets = prefix.split("/")[0].split(".")
    octets[2] = str((int(octets[2]) + 10 * ctx.rng.randint(1, 9)) % 250)
    typo = f"{'.'.join(octets)}/24"
    if typo in ctx.network.lans.values():
        return None
    name = REDISTRIBUTION[0]
    good, bad = (f"ip prefix-list {name} seq {seq} permit {p}" for p in (prefix, typo))
    tag = "ospf.redistribution_filter"
    return FaultPlan(
        Fault(
            type=tag,
            device=router,
            params={"prefix": prefix, "typo": typo},
            inject=[configure(router, f"no {good}", bad)],
            fix=[configure(router, f"no {bad}", good)],
            present=[config_line_probe(tag, router, bad)],
        ),
        Impact(unannounced={host}),
        [],
    )


def router_id_clash(ctx: FaultContext) -> FaultPlan | None:
    """A stub router takes its only neighbour's router-id; the adjacency never forms again.

    A router-id change needs `clear ip ospf process` to take effect, on injection and fix alike.
    """
    if ctx.routing != "ospf":
        return None
    graph = ctx.network.router_graph()
    stubs = sorted(r for r in graph.nodes if graph.degree(r) == 1)
    ctx.rng.shuffle(stubs)
    for router in stubs:
        (peer,) = graph.neighbors(router)
        iface = ctx.network.node(router).iface_to(peer)
        keys = (f"link:{router}:{peer}", f"link:{peer}:{router}", f"if:{router}:{iface.name}")
        if not ctx.take(f"ospf.rid:{router}", *keys):
            continue
        own, taken = router_id(ctx.network, router), router_id(ctx.network, peer)
        tag = "ospf.router_id_clash"
        impact, healthy = link_down(ctx, router, peer, tag)
        clear = execute(router, "clear ip ospf process")
        return FaultPlan(
            Fault(
                type=tag,
                device=router,
                params={"router_id": taken, "intended": own, "peer": peer},
                inject=[configure(router, "router ospf", f"ospf router-id {taken}"), clear],
                fix=[configure(router, "router ospf", f"ospf router-id {own}"), clear],
                present=[adjacency_probe(ctx.network, router, peer, False, tag)],
            ),
            impact,
            healthy,
        )
    return None


MULTIAREA_INJECTORS: dict[str, Injector] = {
    "ospf.stub_area_mismatch": stub_area_mismatch,
    "ospf.missing_redistribution": missing_redistribution,
    "ospf.redistribution_filter": redistribution_filter,
    "ospf.router_id_clash": router_id_clash,
}
