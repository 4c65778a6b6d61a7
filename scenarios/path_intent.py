"""A path intent for OSPF builds: traffic between two sites must follow a designated path
that is not the one plain OSPF would pick.

The reference solution raises the cost of every transit link off the path, which makes the
path the unique cheapest one; the targets check each router's next hop along it, both ways,
so any configuration that yields the same forwarding passes.
"""

from __future__ import annotations

import ipaddress
import itertools
import random

import networkx as nx
from pydantic import BaseModel

from netdojo.scenarios.hidden_tests import PathParams, PathTest, RouteParams, RouteTest
from netdojo.scenarios.network import Network

OFF_PATH_COST = 1000  # above any path's cost even at FRR's fallback of 10 per link

PHRASES = (
    "Traffic between {a} and {b} must follow {path}.",
    "Design requirement: packets from {a} to {b} and back travel {path}.",
    "The {a}-{b} flow is pinned to {path} (capacity planning reasons); make OSPF choose "
    "that path in both directions.",
    "Between {a} and {b}, the only acceptable path is {path}.",
    "Engineer the metrics so that {a} and {b} talk to each other over {path}.",
)
PATH_FORMS = (
    "the routers {routers} in that order",
    "{arrows}",
    "the path {arrows}",
)


class PathIntent(BaseModel):
    source_host: str
    target_host: str
    routers: list[str]  # the designated path, source router first

    def links(self) -> set[frozenset[str]]:
        return {frozenset(pair) for pair in itertools.pairwise(self.routers)}


def choose_path(network: Network, rng: random.Random) -> PathIntent | None:
    """Two sites on different routers and a simple path between them that OSPF would not
    choose by itself (never a unique shortest path); None when the graph has no such path."""
    graph = network.router_graph()
    pairs = list(itertools.combinations(sorted(network.lans), 2))
    rng.shuffle(pairs)
    for a, b in pairs:
        source, target = network.router_of(a), network.router_of(b)
        if source == target:
            continue
        shortest = list(nx.all_shortest_paths(graph, source, target))
        options = [
            path
            for path in itertools.islice(nx.shortest_simple_paths(graph, source, target), 12)
            if not (len(shortest) == 1 and path == shortest[0])
        ]
        if options:
            return PathIntent(source_host=a, target_host=b, routers=rng.choice(options))
    return None


def cost_lines(network: Network, intent: PathIntent, router: str) -> list[str]:
    """Interface lines raising the OSPF cost of ``router``'s transit links off the path."""
    lines: list[str] = []
    for iface in network.node(router).ifaces:
        peer = network.node(iface.peer)
        if peer.role == "router" and frozenset((router, peer.name)) not in intent.links():
            lines += [f"interface {iface.name}", f" ip ospf cost {OFF_PATH_COST}", "exit"]
    return lines


def path_tests(network: Network, intent: PathIntent) -> list[RouteTest]:
    """Each router on the path forwards to the next one, towards either site."""
    tests = []
    ends = ((intent.target_host, intent.routers), (intent.source_host, intent.routers[::-1]))
    for host, routers in ends:
        prefix = str(ipaddress.ip_network(network.lans[host]))
        for here, following in itertools.pairwise(routers):
            via = network.node(following).iface_to(here).address.split("/")[0]
            tests.append(
                RouteTest(
                    id=f"target:path:{here}:{prefix}",
                    description=f"{here} forwards traffic for {host} ({prefix}) to {following}",
                    device=here,
                    params=RouteParams(prefix=prefix, via=via, sole=True, expect=True),
                )
            )
    return tests


def traceroute_test(network: Network, source: str, target: str, routers: list[str]) -> PathTest:
    """``source``'s traceroute to ``target`` crosses ``routers``, in order, and arrives."""
    owners = {
        iface.address.split("/")[0]: router.name
        for router in network.routers
        for iface in router.ifaces
    }
    return PathTest(
        id=f"target:traceroute:{source}-{target}",
        description=f"{source}'s traceroute to {target} crosses {', '.join(routers)}",
        device=source,
        params=PathParams(
            target=network.host_address(target), routers=routers, owners=owners, expect=True
        ),
    )


def traceroute_tests(network: Network, intent: PathIntent) -> list[PathTest]:
    """Each site's traceroute to the other crosses the designated routers, in order."""
    return [
        traceroute_test(network, intent.source_host, intent.target_host, intent.routers),
        traceroute_test(network, intent.target_host, intent.source_host, intent.routers[::-1]),
    ]


def path_sentence(intent: PathIntent, rng: random.Random) -> str:
    hops = [intent.source_host, *intent.routers, intent.target_host]
    path = rng.choice(PATH_FORMS).format(
        routers=", ".join(intent.routers), arrows=" -> ".join(hops)
    )
    return rng.choice(PHRASES).format(a=intent.source_host, b=intent.target_host, path=path)
