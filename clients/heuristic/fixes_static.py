"""Static routes: each router reaches every host LAN via a neighbour on a shortest path."""

from __future__ import annotations

import ipaddress

import networkx as nx

from netdojo.clients.heuristic.actor import Actor
from netdojo.clients.heuristic.model import Net, Snapshot, StaticRoute, Topology


def router_graph(topo: Topology) -> nx.Graph:
    """Routers joined by their transit links (edge attribute ``link``)."""
    graph = nx.Graph()
    graph.add_nodes_from(topo.routers)
    for name, members in sorted(topo.links.items()):
        if topo.is_transit(name) and len(members) == 2:
            graph.add_edge(members[0], members[1], link=name)
    return graph


def lans(topo: Topology) -> list[tuple[Net, str]]:
    """(prefix, gateway router) of each host LAN with a known address plan."""
    found = []
    for link in topo.lan_links():
        port = topo.gateway_port(link)
        if port and port.address:
            found.append((port.address.network, port.device))
    return found


def next_hops(topo: Topology, graph: nx.Graph, router: str, target: str) -> list[str]:
    """Addresses of the neighbours of ``router`` on some shortest path to ``target``, by name."""
    if router not in graph or target not in graph or not nx.has_path(graph, router, target):
        return []
    dist = nx.single_source_shortest_path_length(graph, target)
    hops = []
    for neighbour in sorted(graph.neighbors(router)):
        if dist.get(neighbour, 1 << 30) == dist[router] - 1:
            port = topo.port(neighbour, graph.edges[router, neighbour]["link"])
            if port and port.address:
                hops.append(str(port.address.ip))
    return hops


def design(topo: Topology) -> dict[str, dict[Net, list[str]]]:
    """For each router, each remote LAN and its acceptable next hops."""
    graph = router_graph(topo)
    plan: dict[str, dict[Net, list[str]]] = {}
    for router in topo.routers:
        plan[router] = {}
        for prefix, gateway in lans(topo):
            if gateway != router:
                plan[router][prefix] = next_hops(topo, graph, router, gateway)
    return plan


def _is_address(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


async def fix_static_design(snap: Snapshot, actor: Actor) -> None:
    """Repair the static tables of a statically routed network, route by route."""
    for router, wanted in design(snap.topo).items():
        statics = snap.config(router).statics
        known = snap.topo.known_networks()
        removals: list[StaticRoute] = []
        additions: list[str] = []
        for prefix, hops in sorted(wanted.items(), key=lambda kv: str(kv[0])):
            if not hops:
                continue
            removals += [s for s in statics if s.prefix.subnet_of(prefix) and s.prefix != prefix]
            exact = [s for s in statics if s.prefix == prefix]
            good = [s for s in exact if s.via in hops]
            removals += [s for s in exact if s.via not in hops]
            if not good:
                additions.append(f"ip route {prefix} {hops[0]}")
                # A route re-entered for a mistyped prefix: same length and next hop, no network.
                removals += [
                    s
                    for s in statics
                    if s.prefix.prefixlen == prefix.prefixlen
                    and _is_address(s.via)
                    and s.via in hops
                    and not any(s.prefix.overlaps(n) for n in known)
                ]
        await _apply(actor, router, removals, additions)


async def fix_static_overrides(snap: Snapshot, actor: Actor) -> None:
    """In a dynamically routed network, static routes into the topology's networks override it."""
    known = snap.topo.known_networks()
    for router in snap.topo.routers:
        if not (snap.runs_ospf(router) or snap.runs_bgp(router)):
            continue
        bad = [s for s in snap.config(router).statics if any(s.prefix.overlaps(n) for n in known)]
        await _apply(actor, router, bad, [])


async def _apply(actor: Actor, router: str, removals: list[StaticRoute], additions: list[str]):
    unique = list(dict.fromkeys(s.line for s in removals))
    if not unique and not additions:
        return
    lines = [f"no {line}" for line in unique] + additions
    why = "; ".join([f"removed '{line}'" for line in unique] + [f"added '{a}'" for a in additions])
    await actor.configure(router, lines, why)
