"""Predict which host pairs can ping each other, at baseline and under faults.

A small forwarding model: each router has a next router per destination host (from the
static plan, or from shortest paths over working OSPF adjacencies); faults are described as
an `Impact` (links that carry nothing, routers that drop or misroute, hosts cut off). A ping
works when both directions reach their destination without a drop or a loop.
"""

from __future__ import annotations

import itertools

import networkx as nx
from pydantic import BaseModel, Field

from netdojo.scenarios.network import Network, Routing, static_routes


class Impact(BaseModel):
    """What faults do to forwarding; impacts of several faults combine with `merge`."""

    down_links: set[frozenset[str]] = Field(default_factory=set)
    drops: dict[str, set[str]] = Field(default_factory=dict)  # router -> destination hosts
    redirects: dict[str, dict[str, str]] = Field(default_factory=dict)  # router -> host -> router
    isolated: set[str] = Field(default_factory=set)  # hosts cut off from their gateway
    unannounced: set[str] = Field(default_factory=set)  # hosts whose LAN is not announced
    filtered: set[tuple[str, str, str]] = Field(
        default_factory=set
    )  # (from, to, host) not advertised
    down_sessions: set[frozenset[str]] = Field(default_factory=set)  # iBGP pairs not Established
    no_next_hop_self: set[str] = Field(default_factory=set)  # borders not rewriting next hops

    def merge(self, other: Impact) -> Impact:
        merged = self.model_copy(deep=True)
        merged.down_links |= other.down_links
        merged.isolated |= other.isolated
        merged.unannounced |= other.unannounced
        merged.filtered |= other.filtered
        merged.down_sessions |= other.down_sessions
        merged.no_next_hop_self |= other.no_next_hop_self
        for router, hosts in other.drops.items():
            merged.drops.setdefault(router, set()).update(hosts)
        for router, table in other.redirects.items():
            merged.redirects.setdefault(router, {}).update(table)
        return merged


def _tables(network: Network, routing: Routing, impact: Impact) -> dict[str, dict[str, str]]:
    """Per router, the next router towards each remote host."""
    tables: dict[str, dict[str, str]] = {r.name: {} for r in network.routers}
    if routing == "static":
        by_address = {
            iface.address.split("/")[0]: router.name
            for router in network.routers
            for iface in router.ifaces
        }
        prefix_hosts: dict[str, list[str]] = {}
        for host, prefix in network.lans.items():
            prefix_hosts.setdefault(prefix, []).append(host)
        for router, routes in static_routes(network).items():
            for prefix, hop in routes:
                for host in prefix_hosts[prefix]:
                    tables[router][host] = by_address[hop]
        return tables
    graph = network.router_graph()
    graph.remove_edges_from(tuple(link) for link in impact.down_links)
    if routing == "bgp":
        for host in network.lans:
            if host not in impact.unannounced:
                _bgp_paths(graph, network.router_of(host), host, impact, tables)
        return tables
    for host in network.lans:
        if host in impact.unannounced:
            continue
        target = network.router_of(host)
        for router in tables:
            if router != target and nx.has_path(graph, router, target):
                tables[router][host] = min(nx.all_shortest_paths(graph, router, target))[1]
    return tables


def _bgp_paths(
    graph: nx.Graph, origin: str, host: str, impact: Impact, tables: dict[str, dict[str, str]]
) -> None:
    """Shortest AS paths from ``origin`` over advertisements that are not filtered."""
    frontier, seen = [origin], {origin}
    while frontier:
        following = []
        for sender in frontier:
            for receiver in sorted(graph.neighbors(sender)):
                if receiver in seen or (sender, receiver, host) in impact.filtered:
                    continue
                seen.add(receiver)
                tables[receiver][host] = sender
                following.append(receiver)
        frontier = following


def _reaches(
    network: Network, tables: dict[str, dict[str, str]], impact: Impact, start: str, host: str
) -> bool:
    target = network.router_of(host)
    current, seen = start, set()
    while current != target:
        if current in seen or host in impact.drops.get(current, set()):
            return False
        seen.add(current)
        following = impact.redirects.get(current, {}).get(host) or tables[current].get(host)
        if following is None or frozenset((current, following)) in impact.down_links:
            return False
        current = following
    return True


class _Ibgp:
    """Forwarding in an iBGP core over an OSPF underlay, with external ASes on single links.

    A core router has a usable route to a LAN when it originates it, or holds an Established
    session with the router that does (or with the border that learnt it over eBGP, when that
    border rewrites the next hop). An external router has what its border can use. Packets
    follow the underlay's shortest path to the BGP next hop, and every router on the way
    needs a usable route of its own.
    """

    def __init__(self, network: Network, impact: Impact) -> None:
        self.network, self.impact = network, impact
        self.graph = (
            network.router_graph()
            .subgraph([r.name for r in network.routers if network.internal(r.name)])
            .copy()
        )
        self.graph.remove_edges_from(tuple(link) for link in impact.down_links)

    def border(self, external: str) -> str:
        return self.network.node(external).ifaces[0].peer

    def ebgp_up(self, external: str) -> bool:
        return frozenset((external, self.border(external))) not in self.impact.down_links

    def session(self, a: str, b: str) -> bool:
        return (
            frozenset((a, b)) not in self.impact.down_sessions
            and a in self.graph
            and b in self.graph
            and nx.has_path(self.graph, a, b)
        )

    def has_route(self, router: str, host: str) -> bool:
        origin = self.network.router_of(host)
        if router == origin:
            return True
        if router in self.network.externals:
            return self.ebgp_up(router) and self.has_route(self.border(router), host)
        if origin not in self.network.externals:
            return self.session(router, origin)
        border = self.border(origin)
        if not self.ebgp_up(origin):
            return False
        return router == border or (
            self.session(router, border) and border not in self.impact.no_next_hop_self
        )

    def next_router(self, router: str, host: str) -> str | None:
        origin = self.network.router_of(host)
        if router in self.network.externals:
            return self.border(router)
        goal = origin
        if origin in self.network.externals:
            if router == self.border(origin):
                return origin
            goal = self.border(origin)
        if not nx.has_path(self.graph, router, goal):
            return None
        return min(nx.all_shortest_paths(self.graph, router, goal))[1]

    def reaches(self, start: str, host: str) -> bool:
        target = self.network.router_of(host)
        current, seen = start, set()
        while current != target:
            if current in seen or host in self.impact.drops.get(current, set()):
                return False
            if not self.has_route(current, host):
                return False
            seen.add(current)
            following = self.next_router(current, host)
            if following is None or frozenset((current, following)) in self.impact.down_links:
                return False
            current = following
        return True


def reachable_pairs(network: Network, routing: Routing, impact: Impact) -> set[tuple[str, str]]:
    """Ordered host pairs ``(a, b)`` where a ping from a to b succeeds."""
    if routing == "ibgp":
        model = _Ibgp(network, impact)
        reaches = model.reaches
    else:
        tables = _tables(network, routing, impact)

        def reaches(start: str, host: str) -> bool:
            return _reaches(network, tables, impact, start, host)

    working = set()
    for a, b in itertools.permutations(sorted(network.lans), 2):
        if a in impact.isolated or b in impact.isolated:
            continue
        if reaches(network.router_of(a), b) and reaches(network.router_of(b), a):
            working.add((a, b))
    return working
