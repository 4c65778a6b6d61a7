"""Faults that exist only with OSPF areas or externals (`scenarios.multiarea`): a stub-area
mismatch, redistribution gone or filtered, a router-id clash."""

from __future__ import annotations

from netdojo.scenarios.faults.base import (
    FaultContext,
    FaultPlan,
    absent_line_test,
    adjacency_test,
    config_line_test,
    link_down,
    router_id,
)
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.model import Fault, configure, execute
from netdojo.scenarios.network import REDISTRIBUTION, Network, subnet
from netdojo.scenarios.registry import fault


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


@fault("ospf.stub_area_mismatch", routing={"ospf"})
def stub_area_mismatch(ctx: FaultContext, tag: str) -> FaultPlan | None:
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
        return FaultPlan(
            Fault(
                type=tag,
                device=router,
                params={"area": area},
                inject=[configure(router, "router ospf", f"area {area} stub")],
                fix=[configure(router, "router ospf", f"no area {area} stub")],
                present=[adjacency_test(network, router, peers[0], False, tag)],
            ),
            Impact(down_links={frozenset((router, p)) for p in peers}),
            [adjacency_test(network, router, p, True, tag) for p in peers],
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
            return router, host, subnet(iface.address)
    return None


@fault("ospf.missing_redistribution", routing={"ospf"})
def missing_redistribution(ctx: FaultContext, tag: str) -> FaultPlan | None:
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
    present = absent_line_test(
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


@fault("ospf.redistribution_filter", routing={"ospf"})
def redistribution_filter(ctx: FaultContext, tag: str) -> FaultPlan | None:
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
    return FaultPlan(
        Fault(
            type=tag,
            device=router,
            params={"prefix": prefix, "typo": typo},
            inject=[configure(router, f"no {good}", bad)],
            fix=[configure(router, f"no {bad}", good)],
            present=[config_line_test(tag, router, bad)],
        ),
        Impact(unannounced={host}),
        [],
    )


@fault("ospf.router_id_clash", routing={"ospf"})
def router_id_clash(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A stub router takes its only neighbour's router-id; the adjacency never forms again.

    A router-id change needs `clear ip ospf process` to take effect, on injection and fix alike.
    """
    graph = ctx.router_graph
    stubs = sorted(r for r in graph.nodes if graph.degree(r) == 1)
    ctx.rng.shuffle(stubs)
    for router in stubs:
        (peer,) = graph.neighbors(router)
        iface = ctx.network.node(router).iface_to(peer)
        keys = (f"link:{router}:{peer}", f"link:{peer}:{router}", f"if:{router}:{iface.name}")
        if not ctx.take(f"ospf.rid:{router}", *keys):
            continue
        own, taken = router_id(ctx.network, router), router_id(ctx.network, peer)
        impact, healthy = link_down(ctx, router, peer, tag)
        clear = execute(router, "clear ip ospf process")
        return FaultPlan(
            Fault(
                type=tag,
                device=router,
                params={"router_id": taken, "intended": own, "peer": peer},
                inject=[configure(router, "router ospf", f"ospf router-id {taken}"), clear],
                fix=[configure(router, "router ospf", f"ospf router-id {own}"), clear],
                present=[adjacency_test(ctx.network, router, peer, False, tag)],
            ),
            impact,
            healthy,
        )
    return None
