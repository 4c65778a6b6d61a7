"""The firewall build task: routing works; the agent writes the access policy for a server
(`scenarios.firewall`) as router firewall rules, leaving the hosts alone."""

from __future__ import annotations

import random

from netdojo.labs.spec import LabSpec
from netdojo.scenarios.constructive import host_pings, untouched
from netdojo.scenarios.firewall import choose_policy, install_listener, policy_matrix, policy_text
from netdojo.scenarios.model import HiddenHalf, execute
from netdojo.scenarios.network import Network

BUILD_INTENTS = (
    "Implement this access policy in the network.",
    "The network has no filtering yet. Enforce the following policy on the routers.",
    "Security asks for the access policy below to be enforced in the network.",
)
ROUTING_KEPT = (
    "Routing stays with OSPF as it runs today: add no static or kernel routes and no NAT.",
    "OSPF carries the routes and must keep doing so: no static routes, kernel routes or "
    "address translation.",
    "Use OSPF for routing, as now; static routes, kernel routes and NAT are not allowed.",
)
BUILD_RULES = (
    "Enforce it on the routers, not on the hosts: leave every host's addressing and routes alone.",
    "Do not change the hosts; filtering belongs on a router.",
    "Hosts are out of scope: make no change on them.",
)


def firewall_task(
    network: Network, lab: LabSpec, rng: random.Random
) -> tuple[HiddenHalf, str, list[str]]:
    """A constructive task: write the policy as rules; hosts stay untouched."""
    policy = choose_policy(network, rng)
    install_listener(lab, policy)
    matrix = policy_matrix(network, policy)
    pings = host_pings(network, "guard")
    hidden = HiddenHalf(
        lab=lab,
        solution=[execute(policy.firewall, rule) for rule in policy.rules(network)],
        targets=[test for test in matrix if not test.params.expect],
        guards=[test for test in matrix if test.params.expect] + pings,
        adherence=[untouched(network, host) for host in sorted(network.lans)],
    )
    rules = [
        policy_text(network, policy, rng),
        rng.choice(BUILD_RULES),
        rng.choice(ROUTING_KEPT),
    ]
    brief = f"{rng.choice(BUILD_INTENTS)} {' '.join(rules)} Submit when it is in place."
    return hidden, brief, rules
