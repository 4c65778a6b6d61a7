"""What every injector draws from (`FaultContext`) and returns (`FaultPlan`), and the
hidden tests that several fault types share."""

from __future__ import annotations

import ipaddress
import itertools
import random
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeVar, cast

import networkx as nx

from netdojo.scenarios.firewall import Firewall
from netdojo.scenarios.forwarding import Course, Forwarding, Impact
from netdojo.scenarios.hidden_tests import (
    AddressParams,
    AddressTest,
    BgpSessionParams,
    BgpSessionTest,
    ConfigParams,
    ConfigTest,
    HiddenTest,
    OspfAdjacencyParams,
    OspfAdjacencyTest,
    RouteParams,
    RouteTest,
)
from netdojo.scenarios.ipv6 import ospf6_adjacency_test
from netdojo.scenarios.isis import isis_adjacency_test
from netdojo.scenarios.model import Fault, configure
from netdojo.scenarios.network import (
    Iface,
    Network,
    Routing,
    interface,
    ospf_link,
    parsed_prefix,
    static_routes,
    subnet,
)
from netdojo.scenarios.rip import heard_test
from netdojo.scenarios.symptoms import Observation

T = TypeVar("T")


@dataclass
class FaultContext:
    """What faults are drawn from. The network does not change while they are, so what is
    worked out from it alone is worked out once (`derived` and the cached properties)."""

    network: Network
    routing: Routing
    rng: random.Random
    used: set[str] = field(default_factory=set)  # devices and interfaces already faulted
    firewall: Firewall | None = None  # the policy of a family with a firewall
    _derived: dict[Callable[[Network], object], object] = field(
        default_factory=dict, init=False, repr=False
    )

    def derived(self, work_out: Callable[[Network], T]) -> T:
        """``work_out(network)``, worked out on the first call only."""
        if work_out not in self._derived:
            self._derived[work_out] = work_out(self.network)
        return cast(T, self._derived[work_out])

    def take(self, *keys: str) -> bool:
        """Reserve ``keys``; False when one is already used by another fault."""
        if not self.used.isdisjoint(keys):
            return False
        self.used.update(keys)
        return True

    @cached_property
    def static_plan(self) -> dict[str, list[tuple[str, str]]]:
        return static_routes(self.network)

    @cached_property
    def transit_links(self) -> list[tuple[str, str]]:
        return self.network.transit_links()

    @cached_property
    def model(self) -> Forwarding:
        """The network's forwarding model under the context's routing."""
        return Forwarding(self.network, self.routing)

    @cached_property
    def router_graph(self) -> nx.Graph:
        """The network's router graph (the model's, which it never changes), frozen: copy it to
        change it."""
        return nx.freeze(self.model.graph)

    @cached_property
    def courses(self) -> dict[tuple[str, str], Course]:
        """Where traffic between each ordered host pair goes before any fault."""
        return self.model.courses(Impact())

    @cached_property
    def crossings(self) -> dict[tuple[str, str], list[tuple[str, str]]]:
        """For each router-to-router step (x, y), the ordered host pairs whose traffic arrives
        and goes from x to y on every way, before any fault; in order."""
        found: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for pair, course in sorted(self.courses.items()):
            if course.arrives:
                ways = [set(itertools.pairwise(path)) for path in course.paths]
                for step in set.intersection(*ways):
                    found.setdefault(step, []).append(pair)
        return found


@dataclass
class FaultPlan:
    fault: Fault
    impact: Impact
    healthy: Sequence[HiddenTest]  # functional checks that hold once the fault is repaired
    flows: frozenset[Observation] = frozenset()  # policy flows it breaks (forwarding aside)


Injector = Callable[[FaultContext, str], FaultPlan | None]  # (context, the type's id)


def router_id(network: Network, router: str) -> str:
    loopback = network.node(router).loopback
    assert loopback is not None
    return loopback


def subnet_of(iface: Iface) -> str:
    return subnet(iface.address)


def hosts_in(network: Network, prefix: str) -> set[str]:
    net = parsed_prefix(prefix)
    return {h for h in network.lans if interface(network.node(h).ifaces[0].address).ip in net}


def adjacency_test(network: Network, a: str, b: str, expect: bool, tag: str) -> OspfAdjacencyTest:
    state = "is" if expect else "is not"
    return OspfAdjacencyTest(
        id=f"{tag}:ospf:{a}-{b}",
        description=f"{a} {state} in a Full OSPF adjacency with {b}",
        device=a,
        params=OspfAdjacencyParams(neighbor=router_id(network, b), expect=expect),
    )


def session_test(network: Network, a: str, b: str, expect: bool, tag: str) -> BgpSessionTest:
    peer = network.node(b).iface_to(a).address.split("/")[0]
    state = "is" if expect else "is not"
    return BgpSessionTest(
        id=f"{tag}:bgp:{a}-{b}",
        description=f"{a}'s BGP session with {b} ({peer}) {state} Established",
        device=a,
        params=BgpSessionParams(peer=peer, expect=expect),
    )


def added_route(tag: str, router: str, prefix: str, via: str) -> Fault:
    """A fault that adds ``ip route prefix via`` on ``router``; its fix takes the route away."""
    return Fault(
        type=tag,
        device=router,
        params={"prefix": prefix, "via": via},
        inject=[configure(router, f"ip route {prefix} {via}")],
        fix=[configure(router, f"no ip route {prefix} {via}")],
        present=[route_test(tag, router, prefix, True, via=via)],
    )


def route_test(
    tag: str,
    device: str,
    prefix: str,
    expect: bool,
    via: str | None = None,
    sole: bool = False,
    blackhole: bool = False,
) -> RouteTest:
    what = "has" if expect else "has no"
    where = f" via {via}" if via is not None else ""
    where += " only" if sole else ""
    return RouteTest(
        id=f"{tag}:{device}:{prefix}",
        description=f"{device} {what} a selected route to {prefix}{where}",
        device=device,
        params=RouteParams(prefix=prefix, expect=expect, via=via, sole=sole, blackhole=blackhole),
    )


def address_test(tag: str, device: str, interface: str, address: str) -> AddressTest:
    return AddressTest(
        id=f"{tag}:{device}:{interface}",
        description=f"{device} {interface} carries {address}",
        device=device,
        params=AddressParams(interface=interface, address=address, expect=True),
    )


def config_line_test(tag: str, device: str, line: str) -> ConfigTest:
    return ConfigTest(
        id=f"{tag}:{device}",
        description=f"{device} has '{line}'",
        device=device,
        params=ConfigParams(pattern=line, expect=True),
    )


def absent_line_test(tag: str, device: str, line: str, description: str) -> ConfigTest:
    """A running-config line that must be absent (while a fault that removed it is active)."""
    return ConfigTest(
        id=f"{tag}:{device}",
        description=description,
        device=device,
        params=ConfigParams(pattern=line, expect=False),
    )


def transit_end(
    ctx: FaultContext, cut: bool = False, removes: bool = False
) -> tuple[str, str, Iface] | None:
    """A router-to-router link end not yet faulted: (router, peer, router's interface). With
    ``cut`` (the fault takes the link out of forwarding), never a link a route of another
    fault points over (see `keep_up`); with ``removes`` (the fault removes the link's BGP
    neighbour), never a link whose session another fault's lines name (see `keep_named`)."""
    links = list(ctx.transit_links)
    ctx.rng.shuffle(links)
    for a, b in links:
        if ctx.rng.random() < 0.5:
            a, b = b, a
        iface = ctx.network.node(a).iface_to(b)
        keys = [f"link:{a}:{b}", f"link:{b}:{a}", f"if:{a}:{iface.name}"]
        if cut:
            keys += [_link_key("up", a, b), _link_key("cut", a, b)]
        if removes:
            keys += [_link_key("named", a, b), _link_key("removed", a, b)]
        if ctx.take(*keys):
            return a, b, iface
    return None


def _link_key(what: str, a: str, b: str) -> str:
    return f"{what}:" + ":".join(sorted((a, b)))


def keep_up(ctx: FaultContext, a: str, b: str) -> bool:
    """Whether a fault's route may point over the link a-b (its next hop is on it): no fault
    has cut the link, and none may cut it from now on, or the route would not be selected.
    Any number of routes may share the link."""
    if _link_key("cut", a, b) in ctx.used:
        return False
    ctx.used.add(_link_key("up", a, b))
    return True


def keep_named(ctx: FaultContext, a: str, b: str) -> bool:
    """Whether a fault's lines may name the a-b link's BGP session (a route-map on it): no
    fault has removed its neighbour, and none may from now on, or FRR would refuse the lines.
    Any number of faults may name one session."""
    if _link_key("removed", a, b) in ctx.used:
        return False
    ctx.used.add(_link_key("named", a, b))
    return True


End = tuple[str, str, Iface, dict[str, str]]
"""One end of a transit link to fault: (router, peer, router's interface, the values its config
lines are filled in with)."""


def any_end(ctx: FaultContext) -> End | None:
    """A transit link end not yet faulted; its lines get ``{iface}`` and ``{subnet}``."""
    if not (picked := transit_end(ctx)):
        return None
    a, b, iface = picked
    return a, b, iface, {"iface": iface.name, "subnet": subnet_of(iface)}


def authenticated_end(
    keys: Callable[[Network], Mapping[str, str]],
) -> Callable[[FaultContext], End | None]:
    """A picker of one end of an authenticated link not yet faulted, trying the links in name
    order; ``keys`` gives those links and their keys. Its lines get ``{iface}`` and ``{key}``."""

    def pick(ctx: FaultContext) -> End | None:
        for link, key in sorted(keys(ctx.network).items()):
            ends = next(e for name, e in ctx.network.links if name == link)
            (a, _), (b, _) = ctx.rng.sample(ends, 2)
            iface = ctx.network.node(a).iface_to(b)
            if ctx.take(f"link:{a}:{b}", f"link:{b}:{a}", f"if:{a}:{iface.name}"):
                return a, b, iface, {"iface": iface.name, "key": key}
        return None

    return pick


def end_fault(
    pick: Callable[[FaultContext], End | None],
    head: str,
    inject: Sequence[str],
    fix: Sequence[str],
    present: Callable[[Network, str, str, str], list[HiddenTest]],
) -> Injector:
    """An injector for a fault on one end of a transit link that takes the link down, written
    as config lines under ``head``, all filled in with the picked end's values. ``present``
    gives the tests that show the fault: (network, router, peer, tag)."""

    def injector(ctx: FaultContext, tag: str) -> FaultPlan | None:
        if not (picked := pick(ctx)):
            return None
        a, b, iface, values = picked
        under = head.format(**values)
        impact, healthy = link_down(ctx, a, b, tag)
        return FaultPlan(
            Fault(
                type=tag,
                device=a,
                params={"interface": iface.name, "peer": b},
                inject=[configure(a, under, *(line.format(**values) for line in inject))],
                fix=[configure(a, under, *(line.format(**values) for line in fix))],
                present=present(ctx.network, a, b, tag),
            ),
            impact,
            healthy,
        )

    return injector


def lan_port(ctx: FaultContext) -> tuple[str, str, Iface] | None:
    """A router port facing a host, not yet faulted: (router, host, router's interface)."""
    hosts = sorted(ctx.network.lans)
    ctx.rng.shuffle(hosts)
    for host in hosts:
        router = ctx.network.router_of(host)
        iface = ctx.network.node(router).iface_to(host)
        if ctx.take(f"if:{router}:{iface.name}", f"host:{host}"):
            return router, host, iface
    return None


def bgp_end(ctx: FaultContext, removes: bool = False) -> tuple[str, str, str, int, int] | None:
    """One end of an eBGP session: (router, peer, peer address, own AS, peer AS); ``removes``
    as in `transit_end`."""
    if not (picked := transit_end(ctx, removes=removes)):
        return None
    a, b, _ = picked
    own, peer = ctx.network.node(a), ctx.network.node(b)
    assert own.asn is not None and peer.asn is not None
    return a, b, peer.iface_to(a).address.split("/")[0], own.asn, peer.asn


def link_down(ctx: FaultContext, a: str, b: str, tag: str) -> tuple[Impact, list[HiddenTest]]:
    """A transit link that stops carrying traffic, and the protocol state that shows it is back:
    the OSPF adjacency where OSPF runs on the link, the IS-IS adjacency under IS-IS, RIP updates
    arriving both ways under RIP, the eBGP session elsewhere; nothing for a statically routed
    link, whose repair shows only in what it forwards."""
    impact = Impact(down_links={frozenset((a, b))})
    if ctx.routing == "static":
        return impact, []
    if ctx.routing == "rip":
        return impact, [heard_test(ctx.network, r, s, True, tag) for r, s in ((a, b), (b, a))]
    if ctx.routing == "isis":
        return impact, [isis_adjacency_test(ctx.network, a, b, True, tag)]
    if ctx.routing == "ospf6":
        return impact, [ospf6_adjacency_test(ctx.network, a, b, True, tag)]
    if ospf_link(ctx.network, ctx.routing, a, b):
        return impact, [adjacency_test(ctx.network, a, b, True, tag)]
    return impact, [session_test(ctx.network, a, b, True, tag)]


@dataclass(frozen=True)
class Detour:
    """A link x-y on the only shortest path between two sites, and the way round it from x."""

    target: str  # the host whose traffic is steered
    path: list[str]  # the only shortest path, router by router
    index: int  # where x stands on it; y follows
    around: list[str]  # the shortest way from x to the target's router without x-y

    @property
    def x(self) -> str:
        return self.path[self.index]

    @property
    def y(self) -> str:
        return self.path[self.index + 1]

    @property
    def keys(self) -> list[str]:
        """The links of the way round, both ways: another fault must not take them down."""
        pairs = list(itertools.pairwise(self.around))
        return [f"link:{u}:{v}" for u, v in pairs] + [f"link:{v}:{u}" for u, v in pairs]


def detours(ctx: FaultContext) -> Iterator[Detour]:
    """Links whose loss (or higher cost) would push the traffic between two sites onto a longer
    path that avoids every link another fault touches, drawn one at a time."""
    # Links other faults touch may be down: the detour must not rely on them.
    touched = [(a, b) for a, b in ctx.router_graph.edges if f"link:{a}:{b}" in ctx.used]
    graph = nx.restricted_view(ctx.router_graph, (), touched)
    linked = {router: list(graph[router]) for router in graph}
    pairs = list(itertools.permutations(sorted(ctx.network.lans), 2))
    ctx.rng.shuffle(pairs)
    sole: dict[str, dict[str, list[str]]] = {}  # target -> source -> its only shortest path
    for a, b in pairs:
        source, target = ctx.network.router_of(a), ctx.network.router_of(b)
        if target not in sole:
            sole[target] = sole_shortest_paths(linked, target)
        if source == target or source not in sole[target]:
            continue
        path = sole[target][source]
        index = ctx.rng.randrange(len(path) - 1)
        x, y = path[index], path[index + 1]
        if target not in _reached(linked, x, (x, y)):
            continue
        detour = nx.restricted_view(graph, (), [(x, y)])
        yield Detour(b, path, index, nx.shortest_path(detour, x, target))


def _reached(linked: Mapping[str, Iterable[str]], start: str, lost: tuple[str, str]) -> set[str]:
    """The routers ``start`` reaches over ``linked`` without the link ``lost``."""
    seen, frontier = {start}, [start]
    while frontier:
        router = frontier.pop()
        for n in linked[router]:
            if n not in seen and not (router in lost and n in lost):
                seen.add(n)
                frontier.append(n)
    return seen


def sole_shortest_paths(linked: Mapping[str, Iterable[str]], target: str) -> dict[str, list[str]]:
    """For each router that has exactly one shortest path to ``target`` over ``linked`` (each
    router's neighbours), that path."""
    nearer: dict[str, list[str]] = {target: []}  # each router's neighbours one hop nearer
    hops, frontier = {target: 0}, [target]
    while frontier:
        following = []
        for router in frontier:
            for n in linked[router]:
                if n not in hops:
                    hops[n] = hops[router] + 1
                    nearer[n] = []
                    following.append(n)
                if hops[n] == hops[router] + 1:
                    nearer[n].append(router)
        frontier = following
    sole = {target: [target]}
    for router, steps in nearer.items():  # nearest first
        if len(steps) == 1 and steps[0] in sole:
            sole[router] = [router, *sole[steps[0]]]
    return sole


def steerable_port(ctx: FaultContext) -> tuple[str, str, Iface, str, str] | None:
    """A port whose higher cost would push the traffic between two sites onto a longer path
    that no other fault breaks: (router, peer, router's port, the far site's prefix, the
    peer's address), the port and the detour taken."""
    for way in detours(ctx):
        x, y = way.x, way.y
        iface = ctx.network.node(x).iface_to(y)
        if not ctx.take(f"if:{x}:{iface.name}", f"link:{x}:{y}", f"link:{y}:{x}", *way.keys):
            continue
        via = ctx.network.node(y).iface_to(x).address.split("/")[0]
        return x, y, iface, ctx.network.lans[way.target], via
    return None


def steering_fault(setting: str, value: int, inject: str, fix: str) -> Injector:
    """An injector for a port cost raised to ``value`` (the interface line ``inject``, undone
    by ``fix``) that pushes traffic between two sites onto a longer path; ``setting`` names
    the value in the fault's params."""

    def injector(ctx: FaultContext, tag: str) -> FaultPlan | None:
        if not ctx.take(tag) or not (picked := steerable_port(ctx)):
            return None
        x, y, iface, prefix, via = picked
        head = f"interface {iface.name}"
        return FaultPlan(
            Fault(
                type=tag,
                device=x,
                params={"interface": iface.name, setting: value},
                inject=[configure(x, head, inject)],
                fix=[configure(x, head, fix)],
                present=[route_test(tag, x, prefix, False, via=via)],
            ),
            Impact(costs={x: {y: value}}),
            [route_test(tag, x, prefix, True, via=via)],
        )

    return injector


def unannounced_lan(head: str, statement: str, protocol: str) -> Injector:
    """An injector for a LAN's network statement removed from the process under ``head``, and
    sometimes retyped for a prefix nobody has; ``statement`` gets the ``{prefix}``."""

    def injector(ctx: FaultContext, tag: str) -> FaultPlan | None:
        if not (picked := lan_port(ctx)):
            return None
        router, host, iface = picked
        subnet = subnet_of(iface)
        line = statement.format(prefix=subnet)
        announced = f"{router} does not announce {subnet} in {protocol}"
        present = absent_line_test(tag, router, f" {line}", announced)
        inject, fix = [f"no {line}"], [line]
        typo = mistyped(ctx, subnet)
        if typo and ctx.rng.random() < 0.5:
            retyped = statement.format(prefix=typo)
            inject, fix = [*inject, retyped], [f"no {retyped}", *fix]
        return FaultPlan(
            Fault(
                type=tag,
                device=router,
                params={"prefix": subnet},
                inject=[configure(router, head, *inject)],
                fix=[configure(router, head, *fix)],
                present=[present],
            ),
            Impact(unannounced={host}),
            [],
        )

    return injector


def narrower(address: str, outside: str, rng: random.Random) -> str:
    """``address`` with a longer mask (/25 to /30) that leaves ``outside`` off its subnet."""
    ip, other = address.split("/")[0], ipaddress.ip_address(outside)
    lengths = [n for n in range(25, 31) if other not in interface(f"{ip}/{n}").network]
    return f"{ip}/{rng.choice(lengths)}"


def mistyped(ctx: FaultContext, prefix: str) -> str | None:
    """``prefix`` with its third octet mistyped; None when that is another LAN."""
    octets = prefix.split("/")[0].split(".")
    octets[2] = str((int(octets[2]) + 10 * ctx.rng.randint(1, 9)) % 250)
    typo = f"{'.'.join(octets)}/24"
    return None if typo in ctx.network.lans.values() else typo


def remote_lan_route(ctx: FaultContext) -> tuple[str, str] | None:
    """A router and a remote LAN prefix, the router not attached to that LAN, the pair taken
    (``route:<router>:<prefix>``) so no other fault routes it."""
    lans = [
        (ctx.network.router_of(host), prefix) for host, prefix in sorted(ctx.network.lans.items())
    ]
    pairs = [
        (router.name, prefix)
        for router in ctx.network.routers
        for gateway, prefix in lans
        if gateway != router.name
    ]
    ctx.rng.shuffle(pairs)
    for router, prefix in pairs:
        if ctx.take(f"route:{router}:{prefix}"):
            return router, prefix
    return None
