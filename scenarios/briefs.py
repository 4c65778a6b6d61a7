"""Briefs in many surface forms: the facts stay exact, the wording, order and format vary.

A reactive brief reports some of the observations a fault set makes true (hosts that cannot
reach each other, a host cut off, a flow on a detour, router links carrying no routing, a
firewall policy not enforced as written) and the goal; many fault types and places give each
observation, and it never names a fault type or where it is. The constraints say how the
network must be repaired: through its own routing, not around it.
"""

from __future__ import annotations

import random

from netdojo.scenarios.symptoms import Observation

OPENERS = (
    "Users are complaining.",
    "We have an incident on the lab network.",
    "A change went in last night and things are not right since.",
    "The NOC escalated this ticket to you.",
    "Monitoring raised an alarm a few minutes ago.",
    "Something is off in this routed network.",
    "Please take a look at this network, it misbehaves.",
    "Heads up: the on-call engineer could not finish this one.",
)
PAIR_FORMS = (
    "{a} ({aa}) cannot reach {b} ({ba})",
    "traffic between {a} and {b} fails",
    "{a} gets no reply when it pings {b} at {ba}",
    "there is no connectivity from {a} to {b}",
    "{b} ({ba}) is unreachable from {a}",
    "{a} <-> {b}: broken",
)
ISOLATION_FORMS = (
    "{a} ({aa}) cannot reach anything beyond its own subnet",
    "{a} seems cut off from the rest of the network",
    "nothing answers {a} ({aa}) from the other sites",
)
DETOUR_FORMS = (
    "traffic from {a} to {b} takes a longer path than the design intends",
    "a traceroute from {a} to {b} ({ba}) shows more hops than it should",
    "{a} still reaches {b}, but over a detour",
    "packets from {a} to {b} cross more routers than they should",
)
QUIET_FORMS = (
    "the routing no longer uses every router-to-router link the design has",
    "monitoring shows links between routers that carry no routing, though the design uses all",
    "some router-to-router links sit idle that the design expects to be in use",
)
LOST_FORMS = {
    "ospf": (
        "the routers report fewer OSPF adjacencies than the design calls for",
        "some OSPF adjacencies expected by the design are not up",
        "the OSPF neighbour count is short of what it should be",
    ),
    "ospf6": (
        "the routers report fewer OSPFv3 adjacencies than the design calls for",
        "some OSPFv3 adjacencies expected by the design are not up",
        "the OSPFv3 neighbour count is short of what it should be",
    ),
    "isis": (
        "the routers report fewer IS-IS adjacencies than the design calls for",
        "some IS-IS adjacencies expected by the design are not up",
        "the IS-IS neighbour count is short of what it should be",
    ),
    "bgp": (
        "the routers report fewer Established BGP sessions than the design calls for",
        "some BGP sessions expected by the design are down",
        "the BGP peer count is short of what it should be",
    ),
}
LOST_FORMS["bgp6"] = LOST_FORMS["bgp"]  # the same sessions, between IPv6 addresses
BLOCKED_FORMS = (
    "{client} cannot open TCP port {port} on {server} ({address})",
    "connections from {client} to {server}:{port} fail",
    "{client} reports that TCP/{port} on {server} is unreachable",
)
OPEN_FORMS = (
    "a security scan shows {client} can open TCP port {port} on {server}, against policy",
    "{client} is able to connect to {server} on TCP {port}, which the policy forbids",
    "audit finding: TCP/{port} on {server} ({address}) answers {client}",
)
POLICY_FORMS = (
    "{client}'s access to {server} does not match the policy",
    "an audit of the firewall policy for {server} flags the traffic from {client}",
    "what {client} can reach on {server} ({address}) is not what the policy says",
)
STALLED_FORMS = (
    "{a} can ping {b} ({ba}), but a large file transfer from {a} to {b} hangs",
    "small packets get through from {a} to {b}, yet bulk TCP transfers to {b} stall",
    "copying a file from {a} to {b} ({ba}) never completes, although ping works",
)
SLOW_FORMS = (
    "throughput from {a} to {b} ({ba}) is far too low: iperf3 over a few seconds must show at "
    "least {figure} Mbit/s",
    "transfers from {a} to {b} crawl; the design expects at least {figure} Mbit/s of TCP "
    "throughput (iperf3)",
    "a TCP throughput test from {a} to {b} must reach {figure} Mbit/s or more, and it does not",
)
LOSSY_FORMS = (
    "pings from {a} to {b} ({ba}) lose packets: over a burst of pings at most {figure}% may "
    "go unanswered",
    "{a} sees packet loss towards {b}; the design tolerates at most {figure}% lost pings",
    "traffic between {a} and {b} is lossy, well above the {figure}% loss the network allows",
)
UNRESOLVED_FORMS = (
    "{a} cannot reach {b} by name: looking up {b}'s name from {a} fails or gives the wrong address",
    "name resolution is off on {a}: {b}'s name does not lead to {b} ({ba})",
    "from {a}, the lab name of {b} does not resolve to {ba}",
)
CONNECTIVITY_GOALS = (
    "Restore full connectivity between all hosts.",
    "Make every host reachable from every other host again.",
    "Bring the network back to its intended, fully working state.",
    "Find the cause and repair it so that all hosts can talk to each other.",
    "Fix it: the network must be healthy again with all hosts reachable.",
)
DESIGN_GOALS = (
    "Bring the network back to its intended, fully working state.",
    "Find the cause and put the network back the way it was designed.",
    "Fix it: routing and filtering must work as designed again.",
    "Repair it so that the network behaves as its design says.",
)
MORE = (
    "These are the reports so far; there may be more.",
    "The list may not be complete.",
    "",
    "",
)
CAREFUL = (
    "Do not break anything that works today.",
    "Keep the changes minimal; what works must keep working.",
    "Avoid collateral damage: leave working parts alone.",
)
CLOSERS = ("Call submit when you are done.", "Submit when finished.", "Submit once it is fixed.")
DIAGNOSIS_ONLY = (
    "This is a diagnosis task: your tools only read the network, and nothing is to be changed. "
    "Find the root cause and call submit with a diagnosis: the devices (or device:interface) "
    "at fault and the fault classes, or no device and the class 'none' if nothing is wrong."
)
"""Added to the brief of a diagnosis-only episode."""
ROUTING_RULES = {
    "ospf6": (
        "Reachability must come back through OSPFv3 itself: no static or kernel routes, no "
        "borrowed addresses, no NAT.",
        "Repair the cause: every remote IPv6 prefix must be learnt through OSPFv3, not through "
        "static routes, kernel routes, address tricks or translation.",
        "Do not paper over the fault: routes between sites come from OSPFv3 only (no static or "
        "kernel routes, no extra addresses, no NAT).",
    ),
    "ospf": (
        "Reachability must come back through OSPF itself: no static or kernel routes, no "
        "borrowed addresses, no NAT.",
        "Repair the cause: every remote prefix must be learnt through OSPF, not through static "
        "routes, kernel routes, address tricks or translation.",
        "Do not paper over the fault: routes between sites come from OSPF only (no static or "
        "kernel routes, no extra addresses, no NAT).",
    ),
    "isis": (
        "Reachability must come back through IS-IS itself: no static or kernel routes, no "
        "borrowed addresses, no NAT.",
        "Repair the cause: every remote prefix must be learnt through IS-IS, not through static "
        "routes, kernel routes, address tricks or translation.",
        "Do not paper over the fault: routes between sites come from IS-IS only (no static or "
        "kernel routes, no extra addresses, no NAT).",
    ),
    "bgp": (
        "Reachability must come back through BGP itself: no static or kernel routes, no "
        "borrowed addresses, no NAT.",
        "Repair the cause: every remote prefix must be learnt through BGP, not through static "
        "routes, kernel routes, address tricks or translation.",
        "Do not paper over the fault: routes between sites come from BGP only (no static or "
        "kernel routes, no extra addresses, no NAT).",
    ),
    "bgp6": (
        "Reachability must come back through BGP itself: no static or kernel routes, no "
        "borrowed addresses, no NAT.",
        "Repair the cause: every remote IPv6 prefix must be learnt through BGP, not through "
        "static routes, kernel routes, address tricks or translation.",
        "Do not paper over the fault: routes between sites come from BGP only (no static or "
        "kernel routes, no extra addresses, no NAT).",
    ),
    "ibgp": (
        "Reachability must come back through the network's own routing: BGP for the sites, "
        "over the OSPF underlay; no static or kernel routes, no borrowed addresses, no NAT.",
        "Repair the cause: remote sites must be learnt through BGP (iBGP inside the core, over "
        "OSPF), not through static routes, kernel routes, address tricks or translation.",
        "Do not paper over the fault: routes between sites come from iBGP/eBGP over the OSPF "
        "underlay only (no static or kernel routes, no extra addresses, no NAT).",
    ),
    "rip": (
        "Reachability must come back through RIP itself: no static or kernel routes, no "
        "borrowed addresses, no NAT.",
        "Repair the cause: every remote prefix must be learnt through RIP, not through static "
        "routes, kernel routes, address tricks or translation.",
        "Do not paper over the fault: routes between sites come from RIP only (no static or "
        "kernel routes, no extra addresses, no NAT).",
    ),
    "static": (
        "Repair the static routes and links themselves: no address translation, no addresses "
        "borrowed from other devices.",
        "Routing here is static by design: fix it with the routers' own static routes and "
        "interfaces, without NAT or address tricks.",
    ),
    "datapath-ospf": (
        "OSPF itself is as designed: repair what the routers do to packets (their rules, "
        "filters, queues and interfaces), with no static or kernel routes, no NAT and no "
        "address tricks.",
        "Fix the cause in the routers' packet handling; leave the OSPF design alone and add no "
        "static routes, translation or borrowed addresses.",
    ),
    "datapath-static": (
        "The static routes are as designed: repair what the routers do to packets (their "
        "rules, filters, queues and interfaces), with no NAT and no address tricks.",
        "Fix the cause in the routers' packet handling; the static routing design stays as it "
        "is, with no translation or borrowed addresses.",
    ),
    "services": (
        "Routing is as designed (OSPF): repair the lab's services themselves (the DHCP and DNS "
        "servers' configuration, and the hosts' leases), with no static addresses or routes on "
        "the hosts, no static or kernel routes, no NAT.",
        "Fix the cause in the DHCP and DNS services; hosts keep taking their settings from "
        "DHCP, and routing stays with OSPF (no static or kernel routes, no translation).",
    ),
    "hosts": (
        "Fix each host in its own settings (address, mask, gateway); the routers keep running "
        "OSPF, with no static or kernel routes, proxy ARP or NAT added to cover for a host.",
        "Repair hosts through their own address, mask and gateway; routing stays with OSPF: no "
        "static routes, kernel routes, proxying or translation on the routers.",
        "The cure belongs in the hosts' own settings (address, mask, gateway) or the routers' "
        "interfaces, with OSPF as it is: never static or kernel routes, answering on a host's "
        "behalf, or NAT.",
    ),
}


PERFORMANCE_FORMS = {"stalled": STALLED_FORMS, "slow": SLOW_FORMS, "lossy": LOSSY_FORMS}
FLOW_FORMS = {**PERFORMANCE_FORMS, "unresolved": UNRESOLVED_FORMS}
"""The forms of observations about one flow from a host to another."""


def routing_rule(rules: str, rng: random.Random) -> str:
    return rng.choice(ROUTING_RULES[rules])


def _line(seen: Observation, routing: str, addresses: dict[str, str], rng: random.Random) -> str:
    hosts = seen.hosts
    if seen.kind == "broken":
        a, b = hosts if rng.random() < 0.5 else hosts[::-1]
        form = rng.choice(PAIR_FORMS)
        return form.format(a=a, b=b, aa=addresses[a], ba=addresses[b])
    if seen.kind == "isolated":
        return rng.choice(ISOLATION_FORMS).format(a=hosts[0], aa=addresses[hosts[0]])
    if seen.kind == "detour":
        a, b = hosts
        return rng.choice(DETOUR_FORMS).format(a=a, b=b, ba=addresses[b])
    if seen.kind == "quiet":
        forms = QUIET_FORMS + (LOST_FORMS.get(routing, ()) if seen.lost else ())
        return rng.choice(forms)
    if seen.kind in FLOW_FORMS:
        a, b = hosts
        form = rng.choice(FLOW_FORMS[seen.kind])
        return form.format(a=a, b=b, ba=addresses[b], figure=f"{seen.figure:g}")
    client, server = hosts
    forms = BLOCKED_FORMS if seen.kind == "blocked" else OPEN_FORMS
    if rng.random() < 0.5:
        forms = POLICY_FORMS
    return rng.choice(forms).format(
        client=client, server=server, port=seen.port, address=addresses[server]
    )


def reactive_brief(
    observations: list[Observation],
    routing: str,
    addresses: dict[str, str],
    constraints: list[str],
    rng: random.Random,
) -> str:
    lines = [_line(seen, routing, addresses, rng) for seen in observations]
    rng.shuffle(lines)
    style = rng.choice(("prose", "bullets", "ticket", "chat"))
    reachability = any(seen.kind in ("broken", "isolated") for seen in observations)
    opener = rng.choice(OPENERS)
    goal = rng.choice(CONNECTIVITY_GOALS if reachability else DESIGN_GOALS)
    more = rng.choice(MORE)
    goal = f"{more} {goal}" if more else goal
    rules = [rng.choice(CAREFUL), *constraints]
    closer = rng.choice(CLOSERS)
    if style == "prose":
        body = "; ".join(lines)
        return f"{opener} Reported: {body}. {goal} {' '.join(rules)} {closer}"
    if style == "bullets":
        bullet = rng.choice(("-", "*", "•"))
        listed = "\n".join(f"{bullet} {line}" for line in lines)
        return f"{opener}\n\nWhat we see:\n{listed}\n\n{goal}\n" + "\n".join(rules) + f"\n{closer}"
    if style == "ticket":
        numbered = "\n".join(f"  {i}. {line}" for i, line in enumerate(lines, 1))
        ticket = rng.randint(1000, 99999)
        rules_text = "\n".join(f"  - {rule}" for rule in rules)
        return (
            f"TICKET #{ticket}\nSummary: {opener}\nObserved:\n{numbered}\n"
            f"Expected outcome: {goal}\nConstraints:\n{rules_text}\n{closer}"
        )
    return f"hey, {opener.lower()} {', and '.join(lines)}. {goal.lower()} {' '.join(rules)}"
