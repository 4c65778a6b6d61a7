"""A preferred-exit intent for eBGP builds: one AS must send its traffic for one site out
through a named neighbour whose AS path there is longer than the one plain BGP picks.

The choice is the one the `bgp.local_pref_steering` fault makes (`bgp_exits.exit_choice`);
here it is the goal. The reference solution is that fault's route-map: inbound on the source
router's session with the preferred neighbour, a higher local preference for the site's
prefix. The targets check that the source router routes the prefix through that neighbour
only and, where the rest of the path is unique, that a traceroute follows it.
"""

from __future__ import annotations

import random

import networkx as nx

from netdojo.scenarios.bgp_exits import (
    LOCAL_PREF,
    LOCAL_PREF_SLACK,
    STEERING_NAMES,
    ExitChoice,
    address_towards,
    bgp_head,
    exit_choice,
    prefix_route_map,
)
from netdojo.scenarios.faults.base import FaultContext, route_test
from netdojo.scenarios.hidden_tests import HiddenTest
from netdojo.scenarios.network import Network
from netdojo.scenarios.path_intent import traceroute_test

PHRASES = (
    "Exit policy: traffic from {router} (AS {asn}) to {destination} must leave through "
    "{neighbour}, not along the shortest AS path.",
    "AS {asn} ({router}) has chosen {neighbour} (AS {peer_asn}) as its exit towards "
    "{destination}: that is the only next hop it may use for it.",
    "For {destination}, {router} must forward through {neighbour} alone, even though BGP "
    "would pick another neighbour by itself.",
    "Commercial requirement: AS {asn} on {router} sends its traffic for {destination} via "
    "its neighbour {neighbour}, while every other destination stays reachable.",
    "Make {neighbour} the preferred exit of {router} (AS {asn}) towards {destination}.",
)
DESTINATIONS = ("{prefix}", "{host}'s LAN ({prefix})", "the site of {host}")


def choose_exit(network: Network, rng: random.Random) -> ExitChoice | None:
    """A source router, a site and a preferred neighbour of the source whose path to the
    site is longer than the unique shortest one; None when the network offers none."""
    context = FaultContext(network=network, routing="bgp", rng=rng)
    return exit_choice(context, slack=LOCAL_PREF_SLACK)


def exit_policy_lines(network: Network, choice: ExitChoice, rng: random.Random) -> list[str]:
    """An inbound route-map on the source's session with the preferred neighbour that raises
    the local preference of the site's prefix."""
    name = f"{rng.choice(STEERING_NAMES['in'])}-{choice.other.upper()}"
    peer = address_towards(network, choice.source, choice.other)
    return [
        *prefix_route_map(name, choice.prefix, LOCAL_PREF),
        *bgp_head(network, choice.source),
        f"neighbor {peer} route-map {name} in",
        "exit-address-family",
        "exit",
    ]


def exit_tests(network: Network, choice: ExitChoice) -> list[HiddenTest]:
    """The source routes the site through the preferred neighbour only (a plain build routes
    it through the neighbour on the shortest path); the origin's traceroute follows the
    preferred neighbour's path when that path is the only shortest one."""
    via = address_towards(network, choice.source, choice.other)
    tests: list[HiddenTest] = [
        route_test("target:exit", choice.source, choice.prefix, True, via=via, sole=True)
    ]
    target = network.router_of(choice.host)
    onward = list(nx.all_shortest_paths(network.router_graph(), choice.other, target))
    if len(onward) == 1:
        routers = [choice.source, *onward[0]]
        tests.append(traceroute_test(network, choice.origin, choice.host, routers))
    return tests


def exit_sentence(network: Network, choice: ExitChoice, rng: random.Random) -> str:
    destination = rng.choice(DESTINATIONS).format(prefix=choice.prefix, host=choice.host)
    return rng.choice(PHRASES).format(
        router=choice.source,
        asn=network.node(choice.source).asn,
        neighbour=choice.other,
        peer_asn=network.node(choice.other).asn,
        destination=destination,
    )
