"""Constructive tasks: routers come up addressed but unrouted; the agent builds the routing.

The reference solution is the configuration the reactive families start from, entered through
the `configure` tool; adherence tests check the task's constraints (the protocol asked for,
addresses untouched, a device left alone).
"""

from __future__ import annotations

import itertools
import random
from typing import Literal

from netdojo.scenarios.exit_intent import (
    choose_exit,
    exit_policy_lines,
    exit_sentence,
    exit_tests,
)
from netdojo.scenarios.hidden_tests import (
    AddressParams,
    AddressTest,
    ConfigParams,
    ConfigTest,
    DefaultRouteParams,
    DefaultRouteTest,
    HiddenTest,
    PingParams,
    PingTest,
)
from netdojo.scenarios.isis import isis_lines
from netdojo.scenarios.model import HiddenHalf, configure
from netdojo.scenarios.network import (
    Network,
    Routing,
    bgp_lines,
    ospf_lines,
    render_lab,
    static_lines,
    static_routes,
)
from netdojo.scenarios.path_intent import (
    choose_path,
    cost_lines,
    path_sentence,
    path_tests,
    traceroute_tests,
)
from netdojo.scenarios.rip import rip_lines
from netdojo.scenarios.transit_intent import (
    choose_stub_as,
    policy_lines,
    transit_sentence,
    transit_tests,
)

IntentKind = Literal["path", "no_transit", "preferred_exit"]
INTENTS = {
    "static": (
        "Configure static routing on the routers so that every host can reach every other host.",
        "The routers have their addresses but no routes yet. Add static routes so all hosts can "
        "talk to each other.",
        "Bring up end-to-end connectivity between all hosts using static routes only.",
        "Routing is not configured. Using static routes, make every host reachable from every "
        "other host.",
    ),
    "bgp": (
        "Each router is its own autonomous system (AS numbers below). Configure eBGP between "
        "directly connected routers and announce every host LAN so all hosts reach each other.",
        "Bring up eBGP on every router-to-router link, using the AS numbers listed, and announce "
        "the host subnets: every host must reach every other host.",
        "Build inter-AS routing with BGP: one AS per router (see below), sessions on the direct "
        "links, host LANs announced, full reachability between hosts.",
    ),
    "ospf": (
        "Configure OSPF (area 0) on every router so that all hosts can reach each other.",
        "The routers are addressed but run no routing protocol. Enable OSPF in the backbone "
        "area so every host reaches every other host.",
        "Build the routing with OSPF: all router links in area 0, full reachability between hosts.",
        "Set up a single-area OSPF network across all routers; every host must reach every other.",
    ),
    "rip": (
        "Configure RIP version 2 on every router so that all hosts can reach each other.",
        "The routers are addressed but run no routing protocol. Enable RIPv2 on them so every "
        "host reaches every other host.",
        "Build the routing with RIP (version 2): every router link and host subnet in RIP, full "
        "reachability between hosts.",
    ),
    "isis": (
        "Configure IS-IS on every router, all in one area, so that all hosts can reach each other.",
        "The routers are addressed but run no routing protocol. Bring up IS-IS in a single area "
        "so every host reaches every other host.",
        "Build the routing with IS-IS: one area, every router-to-router link in it, full "
        "reachability between hosts.",
        "Set up a single-area IS-IS network across all routers; every host must reach every other.",
    ),
}
PROTOCOL_RULES = {
    "static": (
        "Use static routes only: no dynamic routing protocol, no NAT.",
        "Static routes only, configured on the routers: no dynamic routing, no address tricks.",
        "Routing must come from static routes on the routers; nothing dynamic, no translation.",
    ),
    "bgp": (
        "Use BGP only: no static or kernel routes, no OSPF, no NAT.",
        "Routing must come from BGP; static routes, kernel routes and OSPF are not allowed.",
        "No static or kernel routes and no IGP: use BGP only.",
    ),
    "ospf": (
        "Use OSPF only; do not add static or kernel routes.",
        "No static routes: routing must come from OSPF, not from kernel routes or NAT either.",
        "Use OSPF for every route: static routes, kernel routes and NAT are not allowed.",
    ),
    "rip": (
        "Use RIP only; do not add static or kernel routes, and run no other routing protocol.",
        "No static routes and no OSPF or BGP: every route must come from RIPv2.",
        "Routing must come from RIP; static routes, kernel routes, other protocols and NAT are "
        "not allowed.",
    ),
    "isis": (
        "Use IS-IS only; do not add static or kernel routes, and run no OSPF.",
        "No static routes: routing must come from IS-IS, not from OSPF, kernel routes or NAT.",
        "Use IS-IS for every route: static routes, kernel routes, OSPF and NAT are not allowed.",
    ),
}
ADDRESS_RULES = (
    "Do not change any interface address.",
    "The addressing plan is fixed: keep every address as it is.",
    "Interface addresses must stay unchanged.",
)
HANDS_OFF = (
    "Leave {host} exactly as it is.",
    "Do not touch {host}.",
    "{host} belongs to another team: make no change on it.",
)


def intent_fits(network: Network, kind: IntentKind) -> bool:
    """Whether ``network`` offers the intent a choice (whether it does depends on no seed)."""
    choose = {"path": choose_path, "no_transit": choose_stub_as, "preferred_exit": choose_exit}
    return choose[kind](network, random.Random(0)) is not None


def host_pings(network: Network, tag: str) -> list[HiddenTest]:
    """A ping for every pair of hosts."""
    return [
        PingTest(
            id=f"{tag}:ping:{a}-{b}",
            description=f"{a} can ping {b} ({network.host_address(b)})",
            device=a,
            params=PingParams(target=network.host_address(b), expect=True),
        )
        for a, b in itertools.combinations(sorted(network.lans), 2)
    ]


def untouched(network: Network, host: str) -> DefaultRouteTest:
    """The host keeps its default route: a proxy for "no change made on it"."""
    gateway = network.node(host).gateway
    return DefaultRouteTest(
        id=f"adherence:untouched:{host}",
        description=f"{host} keeps its default route via {gateway}",
        device=host,
        params=DefaultRouteParams(gateway=gateway, expect=True),
    )


def _gateway_ping(network: Network, host: str) -> PingTest:
    gateway = network.node(host).gateway
    assert gateway is not None
    return PingTest(
        id=f"guard:gateway:{host}",
        description=f"{host} can ping its gateway {gateway}",
        device=host,
        params=PingParams(target=gateway, expect=True),
    )


def _config_test(
    tag: str, device: str, pattern: str, description: str, match: Literal["prefix", "words"]
) -> ConfigTest:
    return ConfigTest(
        id=f"adherence:{tag}:{device}",
        description=description,
        device=device,
        params=ConfigParams(pattern=pattern, match=match, expect=False),
    )


def constructive_hidden(
    network: Network,
    routing: Routing,
    level: int,
    lab_name: str,
    rng: random.Random,
    intent_kind: IntentKind | None = None,
) -> tuple[HiddenHalf, str, list[str]]:
    """The hidden half, the brief and the constraints of a build-the-routing task; an
    ``intent_kind`` adds a policy the build must meet: an OSPF flow pinned to a designated
    path, an AS that must not give transit, or an AS's preferred exit towards one site."""
    daemons = {"ospf": {"ospfd"}, "bgp": {"bgpd"}, "rip": {"ripd"}, "isis": {"isisd"}}.get(
        routing, set()
    )
    lab = render_lab(network, "none", lab_name, daemons=daemons)
    statics = static_routes(network) if routing == "static" else {}
    lines_for = {"ospf": ospf_lines, "bgp": bgp_lines, "rip": rip_lines, "isis": isis_lines}.get(
        routing, lambda _, router: static_lines(statics[router.name])
    )
    solution = [
        configure(router.name, *lines)
        for router in network.routers
        if (lines := lines_for(network, router))
    ]
    targets = host_pings(network, "target")
    guards: list[HiddenTest] = [_gateway_ping(network, host) for host in sorted(network.lans)]
    forbidden = {
        "static": [("router ospf", "OSPF"), ("router bgp", "BGP")],
        "ospf": [("ip route ", "static route")],
        "bgp": [("ip route ", "static route"), ("router ospf", "OSPF")],
        "rip": [("ip route ", "static route"), ("router ospf", "OSPF"), ("router bgp", "BGP")],
        "isis": [("ip route ", "static route"), ("router ospf", "OSPF")],
    }[routing]
    # `ip route` begins IS-IS's own `ip router isis`: an IS-IS task matches whole words.
    match: Literal["prefix", "words"] = "words" if routing == "isis" else "prefix"
    adherence: list[HiddenTest] = [
        _config_test(f"protocol:{what}", r.name, pattern, f"{r.name} has no {what} lines", match)
        for r in network.routers
        for pattern, what in forbidden
    ]
    adherence += [
        AddressTest(
            id=f"adherence:address:{r.name}:{i.name}",
            description=f"{r.name} {i.name} keeps {i.address}",
            device=r.name,
            params=AddressParams(interface=i.name, address=i.address, expect=True),
        )
        for r in network.routers
        for i in r.ifaces
    ]
    rules = [rng.choice(PROTOCOL_RULES[routing]), rng.choice(ADDRESS_RULES)]
    if level >= 2:
        host = rng.choice(sorted(network.lans))
        rules.append(rng.choice(HANDS_OFF).format(host=host))
        adherence.append(untouched(network, host))
    rng.shuffle(rules)
    intent = rng.choice(INTENTS[routing])
    if routing == "bgp":
        intent += " " + ", ".join(f"{r.name} is AS {r.asn}" for r in network.routers) + "."
    layout = rng.choice(("prose", "list"))
    if intent_kind == "path":
        intent_path = choose_path(network, rng)
        if intent_path is None:
            raise ValueError("no alternative path between any two sites")
        intent += " " + path_sentence(intent_path, rng)
        solution = [
            configure(router.name, *cost_lines(network, intent_path, router.name), *lines)
            for router in network.routers
            if (lines := lines_for(network, router))
        ]
        targets += path_tests(network, intent_path)
        targets += traceroute_tests(network, intent_path)
    elif intent_kind == "no_transit":
        stub = choose_stub_as(network, rng)
        if stub is None:
            raise ValueError("no router can stay out of transit with the rest connected")
        intent += " " + transit_sentence(network, stub, rng)
        solution.append(configure(stub, *policy_lines(network, stub)))
        targets += transit_tests(network, stub)
    elif intent_kind == "preferred_exit":
        choice = choose_exit(network, rng)
        if choice is None:
            raise ValueError("no router has a longer exit to any site that it could prefer")
        intent += " " + exit_sentence(network, choice, rng)
        solution.append(configure(choice.source, *exit_policy_lines(network, choice, rng)))
        targets += exit_tests(network, choice)
    if layout == "prose":
        brief = f"{intent} {' '.join(rules)} Submit when the network works."
    else:
        listed = "\n".join(f"- {rule}" for rule in rules)
        brief = f"Task: {intent}\n\nConstraints:\n{listed}\n\nSubmit when done."
    hidden = HiddenHalf(
        lab=lab, solution=solution, targets=targets, guards=guards, adherence=adherence
    )
    return hidden, brief, rules
