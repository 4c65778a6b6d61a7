"""Repair tasks on a translating edge: faults drawn on `nat_edge`'s plan, each with a flow of
its own that it breaks, the hidden tests (broken flows as targets, the rest as guards) and a
brief that states the design and reports one broken flow per fault."""

from __future__ import annotations

import random

from netdojo.scenarios.faults.nat import FAULTS, NatFault
from netdojo.scenarios.model import HiddenHalf, PublicHalf
from netdojo.scenarios.nat_edge import Edge, flows, plan_edge, render
from netdojo.scenarios.network import public_facts
from netdojo.scenarios.registry import Built, ScenarioError

FAULTS_BY_LEVEL = {1: {1: 1}, 2: {1: 1, 2: 1}, 3: {2: 1}}  # weights of fault counts
PLANS = 50
DESIGN_FORMS = (
    "{edge} is the edge between the inside networks ({aggregate}) and the outside. Inside "
    "hosts reach the outside as {public}, {edge}'s outside address, and TCP {port} on {public} "
    "is published for {server} ({server_address}). Outside routers carry no route to the "
    "inside, by design.",
    "By design, everything in {aggregate} leaves through {edge}, translated to {public}; "
    "connections to {public} on TCP port {port} are handed to {server} at {server_address}. "
    "The outside part of the lab has no routes for {aggregate} and must not get any.",
    "The lab's inside ({aggregate}) meets the outside at {edge}. The outside should only ever "
    "see {public} as the source of inside traffic, and {server} ({server_address}) serves the "
    "outside through TCP {port} on {public}. No outside router knows a route to the inside.",
)
SYMPTOM_FORMS = {
    "forward": (
        "From {ext}, TCP {port} on {public} does not get through to {server}.",
        "{ext} can no longer use the service published on {public}:{port}.",
        "Connections from {ext} to {public} port {port} fail or end up somewhere other than "
        "{server}.",
    ),
    "ping": (
        "{host} cannot ping {ext} ({ext_address}).",
        "Pings from {host} to {ext_address} go unanswered.",
        "{host} has lost contact with {ext} at {ext_address}.",
    ),
}
RULES = (
    "Repair the edge and the inside; do not give outside routers routes to the inside, and do "
    "not change hosts.",
    "Fix the cause where it is: the outside must keep having no route to the inside, and hosts "
    "stay as they are.",
    "Keep the design: no routes to the inside on outside routers, no changes on hosts.",
)
BRIEF_FORMS = (
    "{design}\n\nReported: {symptoms}\n\n{rule}",
    "Network: {design}\n\nTickets: {symptoms}\n\nRule: {rule}",
    "{design} Users now report: {symptoms}\n\n{rule}",
)


def repair_instance(level: int, rng: random.Random, lab_name: str) -> Built:
    weights = FAULTS_BY_LEVEL[level]
    count = rng.choices(list(weights), list(weights.values()))[0]
    for _ in range(PLANS):
        plan = plan_edge(level, rng)
        drawn = _draw(plan, count, rng)
        if drawn:
            return _built(plan, drawn, rng, lab_name)
    raise ScenarioError(f"nat-edge: no level {level} plan took {count} faults")


def _draw(plan: Edge, count: int, rng: random.Random) -> list[NatFault]:
    """``count`` faults in distinct slots, each breaking a flow no other one breaks; fewer
    when the plan has no room for them."""
    chosen: list[NatFault] = []
    kinds = sorted(FAULTS)
    rng.shuffle(kinds)
    for kind in kinds:
        if len(chosen) == count:
            break
        found = FAULTS[kind](plan, rng, kind)
        if found is None or any(found.slot == c.slot for c in chosen):
            continue
        together = [*chosen, found]
        if all(_own(f, together) for f in together):
            chosen.append(found)
    return chosen


def _own(fault: NatFault, together: list[NatFault]) -> frozenset[str]:
    others = frozenset[str]().union(*(f.breaks for f in together if f is not fault))
    return fault.breaks - others


def _built(plan: Edge, drawn: list[NatFault], rng: random.Random, lab_name: str) -> Built:
    tests = flows(plan)
    broken = frozenset[str]().union(*(f.breaks for f in drawn))
    hidden = HiddenHalf(
        lab=render(plan, lab_name),
        faults=[f.fault for f in drawn],
        solution=[call for f in reversed(drawn) for call in f.fault.fix],
        targets=[t for t in tests if t.id in broken],
        guards=[t for t in tests if t.id not in broken],
    )
    rule = rng.choice(RULES)
    brief = rng.choice(BRIEF_FORMS).format(
        design=_design(plan, rng), symptoms=_symptoms(plan, drawn, rng), rule=rule
    )
    network = plan.network
    public = PublicHalf(
        brief=brief,
        devices=public_facts(network),
        links=[(link, [dev for dev, _ in ends]) for link, ends in network.links],
        constraints=[rule],
    )
    return Built(public, hidden)


def _design(plan: Edge, rng: random.Random) -> str:
    return rng.choice(DESIGN_FORMS).format(
        edge=plan.edge,
        aggregate=plan.aggregate,
        public=plan.public,
        port=plan.port,
        server=plan.server,
        server_address=plan.address(plan.server),
    )


def _symptoms(plan: Edge, drawn: list[NatFault], rng: random.Random) -> str:
    """One broken flow of each fault's own, as a user would report it."""
    lines = []
    for fault in drawn:
        own = sorted(_own(fault, drawn))
        forward = [i for i in own if i.startswith("nat:forward:")]
        pings = [i for i in own if i.startswith("nat:ping:")]
        if forward and (not pings or rng.random() < 0.5):
            form = rng.choice(SYMPTOM_FORMS["forward"])
            host = plan.ext
        elif pings:
            form = rng.choice(SYMPTOM_FORMS["ping"])
            host = rng.choice(pings).split(":")[2].split("-")[0]
        else:
            raise ScenarioError(f"{fault.fault.type}: no flow of its own to report")
        lines.append(
            form.format(
                ext=plan.ext,
                ext_address=plan.address(plan.ext),
                port=plan.port,
                public=plan.public,
                server=plan.server,
                host=host,
            )
        )
    return " ".join(lines)
