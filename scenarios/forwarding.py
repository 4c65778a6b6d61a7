"""Predict where traffic between hosts goes, at baseline and under faults.

A small forwarding model: each router has the next routers it may use per destination host
(the static plan; equal-cost shortest paths over working OSPF adjacencies, with port costs;
equal-metric RIP paths over the updates that arrive, with offsets;
the shortest AS paths over unfiltered BGP advertisements, with local preferences and
prepends); faults are described as an `Impact` (links that carry nothing, routers that drop
or misroute, hosts cut off). Every way a packet may go is followed: a `Course` holds the router
paths that arrive and whether some way fails, so a prediction is only trusted when every way
agrees. A ping works when both directions arrive.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, fields
from typing import Any, Literal, NamedTuple

import networkx as nx

from netdojo.scenarios.costs import least_costs
from netdojo.scenarios.network import Network, Routing, static_routes
from netdojo.scenarios.rip import rip_hops

MAX_WAYS = 256  # ways followed per course before the model gives up (the course is unsure)


@dataclass(kw_only=True)
class Impact:
    """What faults do to forwarding; impacts of several faults combine with `merge`."""

    down_links: set[frozenset[str]] = field(default_factory=set)
    drops: dict[str, set[str]] = field(default_factory=dict)  # router -> destination hosts
    redirects: dict[str, dict[str, str]] = field(default_factory=dict)  # router -> host -> router
    isolated: set[str] = field(default_factory=set)  # hosts cut off from their gateway
    unannounced: set[str] = field(default_factory=set)  # hosts whose LAN is not announced
    filtered: set[tuple[str, str, str]] = field(
        default_factory=set
    )  # (from, to, host) not advertised
    silenced: set[tuple[str, str]] = field(
        default_factory=set
    )  # (from, to): a neighbour whose updates (or, link-state, hellos) do not reach (one way)
    down_sessions: set[frozenset[str]] = field(default_factory=set)  # iBGP pairs not Established
    no_next_hop_self: set[str] = field(default_factory=set)  # borders not rewriting next hops
    idle_links: set[frozenset[str]] = field(
        default_factory=set
    )  # down links whose adjacency is up but carries no routes
    costs: dict[str, dict[str, int]] = field(default_factory=dict)  # router -> neighbour -> cost
    preferred: dict[str, dict[str, str]] = field(
        default_factory=dict
    )  # router -> host -> neighbour whose BGP path it prefers
    prepends: dict[tuple[str, str, str], int] = field(
        default_factory=dict
    )  # (sender, receiver, host) -> ASes (BGP) or hops (RIP offsets) added to the advertisement
    overloaded: set[str] = field(default_factory=set)  # routers others do not route through
    unresolved: set[frozenset[str]] = field(
        default_factory=set
    )  # links routing still crosses whose next hops do not resolve (IS-IS over a readdressed
    # port): each end forwards over its other best next hops, or drops

    def merge(self, other: Impact) -> Impact:
        """Both impacts at once; where both give one entry a value, ``other``'s. Neither
        changes."""
        joined = {}
        for name in IMPACT_FIELDS:
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine or theirs:  # an empty one is left to its default
                joined[name] = _joined(mine, theirs)
        return Impact(**joined)

    def key(self) -> Hashable:
        """A value equal for equal impacts, whatever order their sets and tables were filled
        in, and hashable: impacts can be told apart in a dictionary."""
        return tuple(
            (name, _frozen(value)) for name in IMPACT_FIELDS if (value := getattr(self, name))
        )


IMPACT_FIELDS = tuple(item.name for item in fields(Impact))


def _joined(mine: Any, theirs: Any) -> Any:
    """Sets united; tables joined entry by entry: where both have an entry, the two joined if
    they are sets or tables, else the entry of ``theirs``. The result shares nothing mutable
    with either."""
    if isinstance(mine, set):
        return mine | theirs
    joined = _copied(mine)
    for key, value in theirs.items():
        both = key in joined and isinstance(value, set | dict)
        joined[key] = _joined(joined[key], value) if both else _copied(value)
    return joined


def _copied(value: Any) -> Any:
    if isinstance(value, set):
        return set(value)
    if isinstance(value, dict):
        return {key: _copied(entry) for key, entry in value.items()}
    return value


def _frozen(value: Any) -> Hashable:
    """A set or a table (of sets, tables or values) as a frozen set."""
    if isinstance(value, set):
        return frozenset(value)
    return frozenset(
        (key, _frozen(entry) if isinstance(entry, set | dict) else entry)
        for key, entry in value.items()
    )


@dataclass(frozen=True)
class Course:
    """Where traffic from a router towards a host can go: the router paths that arrive, whether
    some way fails, and whether it arrives along a path the model cannot tell."""

    paths: frozenset[tuple[str, ...]]
    fails: bool
    unsure: bool = False

    @property
    def arrives(self) -> bool:
        return bool(self.paths) and not self.fails and not self.unsure

    @property
    def lost(self) -> bool:
        return self.fails and not self.paths and not self.unsure

    @property
    def arrives_somehow(self) -> bool:
        """It arrives, whether or not the model knows the path."""
        return (bool(self.paths) or self.unsure) and not self.fails


Hops = Callable[[str, str, bool], set[str] | None]  # (router, host, first) -> next routers
LinkState = tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]]  # see `_link_state`


class Step(NamedTuple):
    """Where traffic goes on from a router: the next routers over links that are up, in name
    order, and whether some way is lost there (no next router, or one over a link down)."""

    onward: tuple[str, ...]
    lost: bool


Ping = Literal["works", "broken", "unsure"]


class Forwarding:
    """The forwarding model of one network under one routing: what stays the same whatever the
    faults (the router graph, the static plan, the hosts' gateways) is worked out once, and the
    courses under each impact once (the network must not change while the model is in use)."""

    def __init__(self, network: Network, routing: Routing) -> None:
        self.network, self.routing = network, routing
        self.hosts = sorted(network.lans)
        self.gateway = {host: network.router_of(host) for host in self.hosts}
        self.graph = network.router_graph()
        self.transit = frozenset(frozenset(link) for link in self.graph.edges)
        self.static: dict[str, dict[str, str]] = {r.name: {} for r in network.routers}
        if routing == "static":
            self._plan_static()
        self._courses: dict[Hashable, dict[tuple[str, str], Course]] = {}  # by `Impact.key`
        self._link_states: dict[Hashable, LinkState] = {}

    def _plan_static(self) -> None:
        by_address = {
            iface.address.split("/")[0]: router.name
            for router in self.network.routers
            for iface in router.ifaces
        }
        prefix_hosts: dict[str, list[str]] = {}
        for host, prefix in self.network.lans.items():
            prefix_hosts.setdefault(prefix, []).append(host)
        for router, routes in static_routes(self.network).items():
            for prefix, hop in routes:
                for host in prefix_hosts[prefix]:
                    self.static[router][host] = by_address[hop]

    def courses(self, impact: Impact) -> dict[tuple[str, str], Course]:
        """For each ordered host pair ``(a, b)``, where traffic from a's gateway to b goes."""
        key = impact.key()
        if key not in self._courses:
            self._courses[key] = self._follow(impact)
        return dict(self._courses[key])

    def _follow(self, impact: Impact) -> dict[tuple[str, str], Course]:
        hops = self._hops(impact)
        ahead: dict[tuple[str, str, bool], Step | None] = {}

        def step(router: str, host: str, first: bool) -> Step | None:
            """Where traffic for ``host`` goes on from ``router`` (asked once per impact)."""
            key = (router, host, first)
            if key not in ahead:
                redirect = impact.redirects.get(router, {}).get(host)
                following = {redirect} if redirect else hops(router, host, first)
                ahead[key] = None
                if following is not None:
                    down: set[str] = set()
                    if impact.down_links:
                        down = {n for n in following if frozenset((router, n)) in impact.down_links}
                    ahead[key] = Step(tuple(sorted(following - down)), not following or bool(down))
            return ahead[key]

        found = {}
        for a, b in itertools.permutations(self.hosts, 2):
            if a in impact.isolated or b in impact.isolated:
                found[a, b] = Course(frozenset(), True)
            else:
                found[a, b] = self._walk(impact, step, self.gateway[a], b)
        return found

    def ping_states(
        self, impact: Impact, found: dict[tuple[str, str], Course] | None = None
    ) -> dict[tuple[str, str], Ping]:
        """Whether a ping from a to b works, fails, or depends on choices the model cannot
        tell (``found``: the courses under ``impact``, when already worked out)."""
        found = self.courses(impact) if found is None else found
        states: dict[tuple[str, str], Ping] = {}
        for (a, b), there in found.items():
            back = found[b, a]
            if there.lost or back.lost:
                states[a, b] = "broken"
            elif there.arrives_somehow and back.arrives_somehow:
                states[a, b] = "works"
            else:
                states[a, b] = "unsure"
        return states

    def _walk(
        self,
        impact: Impact,
        step: Callable[[str, str, bool], Step | None],
        start: str,
        host: str,
    ) -> Course:
        """Every way from ``start`` towards ``host``'s gateway."""
        target = self.gateway[host]
        paths: set[tuple[str, ...]] = set()
        fails = unsure = False
        stack: list[tuple[str, ...]] = [(start,)]
        explored = 0
        while stack:
            path = stack.pop()
            explored += 1
            if explored > MAX_WAYS:
                return Course(frozenset(paths), True, True)
            current = path[-1]
            if current == target:
                paths.add(path)
                continue
            if host in impact.drops.get(current, ()):
                fails = True
                continue
            ahead = step(current, host, len(path) == 1)
            if ahead is None:
                unsure = True
                continue
            fails = fails or ahead.lost
            for router in ahead.onward:
                if router in path:
                    fails = True
                else:
                    stack.append((*path, router))
        return Course(frozenset(paths), fails, unsure)

    def _hops(self, impact: Impact) -> Hops:
        if self.routing == "ibgp":
            return _Ibgp(self, impact).hops
        if self.routing == "static":
            return lambda router, host, _first: (
                {self.static[router][host]} if host in self.static[router] else set()
            )
        if self.routing in ("bgp", "bgp6"):
            return self._bgp_hops(impact)
        if self.routing == "rip":
            return rip_hops(self.graph, self.gateway, impact)
        return self._ospf_hops(impact)

    def _ospf_hops(self, impact: Impact) -> Hops:
        """Equal-cost next routers over working adjacencies; a port costs 1 unless raised. An
        overloaded router is no one's transit: others reach it, it reaches others, but no path
        of another router crosses it. A router that does not hear a neighbour leaves it out of
        its link-state advertisement, so no path goes from it to that neighbour, while the
        neighbour, which still hears it, keeps the way back (no two-way check)."""
        costs, distances = self._link_state(impact)

        def hops(router: str, host: str, _first: bool) -> set[str] | None:
            if host in impact.unannounced:
                return set()
            gateway = self.gateway[host]
            distance = distances[gateway]
            ways = {n: cost + distance[n] for n, cost in costs[router].items() if n in distance}
            if router in impact.overloaded and router != gateway:
                cheapest = min(ways.values(), default=None)
                return {n for n, cost in ways.items() if cost == cheapest}
            if router not in distance:
                return set()
            best = {n for n, cost in ways.items() if cost == distance[router]}
            if impact.unresolved:
                best = {n for n in best if frozenset((router, n)) not in impact.unresolved}
            return best

        return hops

    def _link_state(self, impact: Impact) -> LinkState:
        """Each router's port costs towards the neighbours it hears, and every router's least
        cost to each gateway; worked out once for the links, costs and overloaded routers of
        an impact, whatever else it holds."""
        key = (
            frozenset(impact.down_links),
            frozenset(impact.silenced),
            _frozen(impact.costs),
            frozenset(impact.overloaded),
        )
        if key in self._link_states:
            return self._link_states[key]
        costs: dict[str, dict[str, int]] = {router: {} for router in self.graph}
        for a, b in self.graph.edges:
            if frozenset((a, b)) in impact.down_links:
                continue
            if (b, a) not in impact.silenced:
                costs[a][b] = impact.costs.get(a, {}).get(b, 1)
            if (a, b) not in impact.silenced:
                costs[b][a] = impact.costs.get(b, {}).get(a, 1)
        arriving: dict[str, dict[str, int]] = {router: {} for router in costs}
        for a, ways in costs.items():
            if a not in impact.overloaded:
                for b, cost in ways.items():
                    arriving[b][a] = cost
        distances = {target: least_costs(arriving, target) for target in set(self.gateway.values())}
        self._link_states[key] = costs, distances
        return costs, distances

    def _bgp_hops(self, impact: Impact) -> Hops:
        """The neighbours a router may have learnt its best path from (ties are BGP's to
        break).

        A router whose choice a preference or a prepend changes is followed only where the
        flow starts; a flow crossing it elsewhere arrives along a path the model does not claim
        to know, because its changed advertisement may move its neighbours' choices too."""
        linked = {
            router: {
                n for n in self.graph[router] if frozenset((router, n)) not in impact.down_links
            }
            for router in self.graph
        }
        distances = {
            host: _bgp_distances(linked, self.gateway[host], host, impact)
            for host in self.hosts
            if host not in impact.unannounced
        }
        steered = {(r, h) for r, table in impact.preferred.items() for h in table}
        steered |= {(receiver, h) for _, receiver, h in impact.prepends}

        def learnt(router: str, host: str) -> set[str]:
            distance = distances.get(host, {})
            if router not in distance:
                return set()
            return {
                n
                for n in linked[router]
                if distance.get(n) == distance[router] - 1
                and (n, router, host) not in impact.filtered
            }

        def offers(router: str, neighbour: str, host: str) -> bool:
            """Whether ``neighbour`` advertises ``host`` to ``router`` along a path avoiding
            it."""
            distance = distances.get(host, {})
            if neighbour not in distance or (neighbour, router, host) in impact.filtered:
                return False
            return neighbour in linked[router] and router not in _every_router_on(
                learnt, neighbour, host, self.gateway[host]
            )

        def hops(router: str, host: str, first: bool) -> set[str] | None:
            if (router, host) not in steered:
                return learnt(router, host)
            if not first:
                return None
            choice = impact.preferred.get(router, {}).get(host)
            if choice is not None and offers(router, choice, host):
                return {choice}
            distance = distances.get(host, {})
            lengths = {
                n: distance[n] + impact.prepends.get((n, router, host), 0)
                for n in linked[router]
                if offers(router, n, host)
            }
            if not lengths:
                return set()
            best = min(lengths.values())
            return {n for n, length in lengths.items() if length == best}

        return hops


def _bgp_distances(
    linked: dict[str, set[str]], origin: str, host: str, impact: Impact
) -> dict[str, int]:
    """Shortest AS path lengths from ``origin`` over advertisements that are not filtered, on
    the links that are up (``linked``: each router's neighbours over them)."""
    distance, frontier = {origin: 0}, [origin]
    while frontier:
        following = []
        for sender in frontier:
            for receiver in sorted(linked[sender]):
                if receiver in distance or (sender, receiver, host) in impact.filtered:
                    continue
                distance[receiver] = distance[sender] + 1
                following.append(receiver)
        frontier = following
    return distance


def _every_router_on(
    learnt: Callable[[str, str], set[str]], start: str, host: str, target: str
) -> set[str]:
    """Every router on any of ``start``'s best paths towards ``host``."""
    seen, frontier = {start}, [start]
    while frontier:
        router = frontier.pop()
        if router == target:
            continue
        for n in learnt(router, host) - seen:
            seen.add(n)
            frontier.append(n)
    return seen


class _Ibgp:
    """Forwarding in an iBGP core over an OSPF underlay, with external ASes on single links.

    A core router has a usable route to a LAN when it originates it, or holds an Established
    session with the router that does (or with the border that learnt it over eBGP, when that
    border rewrites the next hop). An external router has what its border can use. Packets
    follow the underlay's shortest path to the BGP next hop, and every router on the way
    needs a usable route of its own.
    """

    def __init__(self, model: Forwarding, impact: Impact) -> None:
        network = model.network
        self.network, self.impact, self.gateway = network, impact, model.gateway
        self.graph = model.graph.subgraph(
            [r.name for r in network.routers if network.internal(r.name)]
        ).copy()
        self.graph.remove_edges_from(tuple(link) for link in impact.down_links)
        self.part = {
            router: index
            for index, part in enumerate(nx.connected_components(self.graph))
            for router in part
        }
        self.borders = {e: network.node(e).ifaces[0].peer for e in network.externals}
        self.toward: dict[str, dict[str, list[str]]] = {}

    def ebgp_up(self, external: str) -> bool:
        return frozenset((external, self.borders[external])) not in self.impact.down_links

    def session(self, a: str, b: str) -> bool:
        return (
            frozenset((a, b)) not in self.impact.down_sessions
            and a in self.part
            and self.part[a] == self.part.get(b)
        )

    def has_route(self, router: str, host: str) -> bool:
        origin = self.gateway[host]
        if router == origin:
            return True
        if router in self.borders:
            return self.ebgp_up(router) and self.has_route(self.borders[router], host)
        if origin not in self.borders:
            return self.session(router, origin)
        border = self.borders[origin]
        if not self.ebgp_up(origin):
            return False
        return router == border or (
            self.session(router, border) and border not in self.impact.no_next_hop_self
        )

    def next_router(self, router: str, host: str) -> str | None:
        origin = self.gateway[host]
        if router in self.borders:
            return self.borders[router]
        goal = origin
        if origin in self.borders:
            if router == self.borders[origin]:
                return origin
            goal = self.borders[origin]
        if self.part.get(router) != self.part.get(goal):
            return None
        if goal not in self.toward:
            self.toward[goal] = nx.single_source_shortest_path(self.graph, goal)
        return self.toward[goal][router][-2]

    def hops(self, router: str, host: str, _first: bool) -> set[str] | None:
        if not self.has_route(router, host):
            return set()
        following = self.next_router(router, host)
        return {following} if following else set()


def courses(network: Network, routing: Routing, impact: Impact) -> dict[tuple[str, str], Course]:
    """For each ordered host pair ``(a, b)``, where traffic from a's gateway to b goes."""
    return Forwarding(network, routing).courses(impact)


def ping_states(network: Network, routing: Routing, impact: Impact) -> dict[tuple[str, str], Ping]:
    return Forwarding(network, routing).ping_states(impact)


def reachable_pairs(network: Network, routing: Routing, impact: Impact) -> set[tuple[str, str]]:
    """Ordered host pairs ``(a, b)`` where a ping from a to b succeeds."""
    return {
        pair for pair, state in ping_states(network, routing, impact).items() if state == "works"
    }
