"""A no-transit intent for eBGP builds: one AS must carry no traffic between other ASes.

The reference solution filters that router's announcements to the routes it originates (an
empty AS path); the targets check that none of its neighbours routes a foreign LAN through
it, while every host still reaches every other one around it.
"""

from __future__ import annotations

import ipaddress
import random

import networkx as nx

from netdojo.scenarios.hidden_tests import BgpRouteParams, BgpRouteTest
from netdojo.scenarios.network import Network

PHRASES = (
    "{router} (AS {asn}) is a customer network: it must not provide transit between other "
    "ASes, only announce its own prefixes.",
    "No transit through AS {asn} ({router}): its neighbours may reach its own networks through "
    "it, and nothing else.",
    "Policy: {router} must never carry traffic between two other autonomous systems.",
    "Make sure AS {asn} on {router} advertises only locally originated routes, so it does not "
    "become a transit path.",
)


def choose_stub_as(network: Network, rng: random.Random) -> str | None:
    """A router with two or more neighbours whose removal leaves the rest connected."""
    graph = network.router_graph()
    cut = set(nx.articulation_points(graph))
    candidates = sorted(r for r in graph.nodes if graph.degree(r) >= 2 and r not in cut)
    return rng.choice(candidates) if candidates else None


def policy_lines(network: Network, router: str) -> list[str]:
    """An outbound route-map on every session that passes only the router's own routes."""
    node = network.node(router)
    peers = [
        network.node(i.peer).iface_to(router).address.split("/")[0]
        for i in node.ifaces
        if network.node(i.peer).role == "router"
    ]
    return [
        "bgp as-path access-list LOCAL-ONLY seq 5 permit ^$",
        "route-map NO-TRANSIT permit 10",
        " match as-path LOCAL-ONLY",
        "exit",
        f"router bgp {node.asn}",
        " address-family ipv4 unicast",
        *(f"  neighbor {peer} route-map NO-TRANSIT out" for peer in peers),
        " exit-address-family",
        "exit",
    ]


def transit_tests(network: Network, router: str) -> list[BgpRouteTest]:
    """Each neighbour of ``router`` routes the other sites' LANs, with no path for them
    learnt from ``router``: a plain build fails this, since every router passes its best
    routes on to all its peers."""
    tests = []
    for iface in network.node(router).ifaces:
        neighbour = network.node(iface.peer)
        if neighbour.role != "router":
            continue
        via = iface.address.split("/")[0]
        for host, prefix in sorted(network.lans.items()):
            if network.router_of(host) in (router, neighbour.name):
                continue
            net = str(ipaddress.ip_network(prefix))
            tests.append(
                BgpRouteTest(
                    id=f"target:no-transit:{neighbour.name}:{net}",
                    description=f"{neighbour.name} routes {net} and learns no path for it "
                    f"from {router}",
                    device=neighbour.name,
                    params=BgpRouteParams(prefix=net, not_from=via, expect=True),
                )
            )
    return tests


def transit_sentence(network: Network, router: str, rng: random.Random) -> str:
    return rng.choice(PHRASES).format(router=router, asn=network.node(router).asn)
