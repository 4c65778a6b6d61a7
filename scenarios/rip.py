"""RIPv2 in a lab: each router's configuration, where its routes go, and the test that shows a
neighbour's updates arrive.

RIP runs on every port and announces each router's loopback; ports facing hosts are passive.
Timers are the shortest FRR accepts (update 5 s, timeout 15 s, garbage 10 s), so a route
whose updates stop is gone within about 15 s. `allow-ecmp` makes ripd install every
equal-metric path, as the forwarding model expects. Metrics are hop counts: a route reaches
16 (unreachable) 15 hops from its origin, which the planner keeps networks well inside.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

import networkx as nx

from netdojo.scenarios.costs import least_costs
from netdojo.scenarios.hidden_tests import RouteParams, RouteTest

if TYPE_CHECKING:
    from netdojo.scenarios.forwarding import Hops, Impact
    from netdojo.scenarios.network import Iface, Network, Node

TIMERS = "timers basic 5 15 10"
INFINITY = 16  # RIP's unreachable metric
REACH = INFINITY - 2  # the most hops a route can travel: its origin announces metric 1


def rip_lines(network: Network, router: Node) -> list[str]:
    """RIPv2 on every port and the loopback, host ports passive; MD5 where the plan
    authenticates a link."""
    lines: list[str] = []
    for iface in router.ifaces:
        if iface.link in network.rip_auth:
            lines += [
                f"interface {iface.name}",
                " ip rip authentication mode md5",
                f" ip rip authentication string {network.rip_auth[iface.link]}",
                "exit",
            ]
    lines += ["router rip", " version 2", f" {TIMERS}", " allow-ecmp"]
    lines += [f" network {ipaddress.ip_interface(i.address).network}" for i in router.ifaces]
    lines.append(f" network {router.loopback}/32")
    lines += [f" passive-interface {i.name}" for i in host_ports(network, router)]
    return [*lines, "exit"]


def host_ports(network: Network, router: Node) -> list[Iface]:
    return [i for i in router.ifaces if network.node(i.peer).role == "host"]


def heard_test(network: Network, receiver: str, sender: str, expect: bool, tag: str) -> RouteTest:
    """``receiver`` routes to ``sender``'s loopback through ``sender`` itself: the updates
    ``sender`` sends over their link arrive and are accepted."""
    loopback = network.node(sender).loopback
    via = network.node(sender).iface_to(receiver).address.split("/")[0]
    state = "learns" if expect else "does not learn"
    return RouteTest(
        id=f"{tag}:rip:{receiver}<-{sender}",
        description=f"{receiver} {state} {sender}'s loopback {loopback} from {sender} over RIP",
        device=receiver,
        params=RouteParams(prefix=f"{loopback}/32", via=via, expect=expect),
    )


def link_guards(network: Network, impact: Impact) -> list[RouteTest]:
    """Every transit link no fault takes down carries updates: one direction each (the other
    where a fault silences it), which is enough to show the link is in RIP."""
    guards = []
    for a, b in network.transit_links():
        if frozenset((a, b)) in impact.down_links:
            continue
        receiver, sender = (b, a) if (b, a) in impact.silenced else (a, b)
        guards.append(heard_test(network, receiver, sender, True, "guard"))
    return guards


def rip_hops(graph: nx.Graph, gateway: dict[str, str], impact: Impact) -> Hops:
    """Equal-metric next routers per destination host, as distance vectors settle: a router
    uses a neighbour whose updates for the host reach it (not silenced, not filtered), at one
    hop plus any offset, within RIP's reach."""
    distances: dict[str, dict[str, int]] = {}
    heard: dict[str, dict[str, dict[str, int]]] = {}  # host -> receiver -> sender -> metric
    for host, origin in gateway.items():
        if host in impact.unannounced:
            continue
        listens: dict[str, dict[str, int]] = {router: {} for router in graph}
        arriving: dict[str, dict[str, int]] = {router: {} for router in graph}
        for a, b in graph.edges:
            if frozenset((a, b)) in impact.down_links:
                continue
            for receiver, sender in ((a, b), (b, a)):
                if (sender, receiver) in impact.silenced or (
                    sender,
                    receiver,
                    host,
                ) in impact.filtered:
                    continue
                metric = 1 + impact.prepends.get((sender, receiver, host), 0)
                listens[receiver][sender] = arriving[sender][receiver] = metric
        heard[host] = listens
        distances[host] = least_costs(arriving, origin, cutoff=REACH)

    def hops(router: str, host: str, _first: bool) -> set[str]:
        distance = distances.get(host, {})
        if router not in distance:
            return set()
        return {
            n
            for n, metric in heard[host][router].items()
            if n in distance and metric + distance[n] == distance[router]
        }

    return hops
