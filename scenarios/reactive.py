"""Reactive instances: faults drawn on a working network, each with a symptom of its own (but
the masked fault of a cascade, `scenarios.cascade`), and the hidden tests, the repair rule and
the brief that reports some of the symptoms."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

from netdojo.scenarios import rip
from netdojo.scenarios.briefs import reactive_brief, routing_rule
from netdojo.scenarios.cascade import Pair, draw_pair, holds
from netdojo.scenarios.cascade import record as cascade_record
from netdojo.scenarios.faults.base import FaultContext, FaultPlan
from netdojo.scenarios.faults.red_herring import red_herring
from netdojo.scenarios.firewall import (
    Firewall,
    Policy,
    choose_policy,
    install_policy,
    policy_matrix,
    policy_text,
)
from netdojo.scenarios.forwarding import Forwarding, Impact
from netdojo.scenarios.hidden_tests import (
    BgpSessionParams,
    BgpSessionTest,
    HiddenTest,
    OspfAdjacencyParams,
    OspfAdjacencyTest,
    PingParams,
    PingTest,
)
from netdojo.scenarios.ipv6 import ospf6_adjacency_test
from netdojo.scenarios.isis import isis_adjacency_test
from netdojo.scenarios.model import Cascade, HiddenHalf
from netdojo.scenarios.network import Network, Routing, ospf_link, render_lab
from netdojo.scenarios.path_intent import traceroute_test
from netdojo.scenarios.registry import Family, ScenarioError
from netdojo.scenarios.symptoms import Observation, designed_paths, outlook

REAL_FAULTS_BY_LEVEL = {1: {1: 1, 2: 2}, 2: {1: 1, 2: 3, 3: 3}, 3: {2: 1, 3: 2, 4: 1}}  # weights
EXTRA_REPORTS = 0.25  # chance that an observation no fault needs for its cover is reported too
TRIES = 6  # draws of each fault type, to find the places it can land


@dataclass
class Drawn:
    """An instance's faults as drawn: the plans (red herring last), the firewall policy of a
    family with one, and the cascade among the plans, if any."""

    model: Forwarding
    plans: list[FaultPlan]
    policy: Policy | None
    cascade: Cascade | None


def reactive_task(
    spec: Family,
    level: int,
    network: Network,
    lab_name: str,
    rng: random.Random,
    cascade: bool = False,
) -> tuple[HiddenHalf, str, list[str]]:
    """The hidden half, the brief and the constraints of a repair task on ``network``."""
    drawn = draw_faults(spec, level, network, rng, cascade)
    return _assemble(spec, drawn.model, drawn.plans, lab_name, rng, drawn.policy, drawn.cascade)


def draw_faults(
    spec: Family, level: int, network: Network, rng: random.Random, cascade: bool = False
) -> Drawn:
    """The faults of a repair task on ``network``; with ``cascade``, the first two are a
    cascade (`scenarios.cascade`) where the network offers one."""
    policy = choose_policy(network, rng) if spec.firewall else None
    firewall = Firewall.of(network, policy) if policy else None
    ctx = FaultContext(network=network, routing=spec.network_routing, rng=rng, firewall=firewall)
    model = ctx.model
    weights = REAL_FAULTS_BY_LEVEL[level]
    count = rng.choices(list(weights), list(weights.values()))[0]
    pair = _cascade_pair(spec, ctx, model) if cascade else None
    plans = _pick_faults(spec, ctx, model, count, pair)
    if level >= 2:
        plans.append(red_herring(ctx))
    real = [plan for plan in plans if not plan.fault.red_herring]
    return Drawn(model, plans, policy, cascade_record(real, model) if pair else None)


def _cascade_pair(spec: Family, ctx: FaultContext, model: Forwarding) -> Pair | None:
    """A cascade among the places the family's faults can land; None, with the generator and
    the context as they were, when there is none."""
    state = ctx.rng.getstate()
    pair = draw_pair(ctx, model, _offers(spec, ctx))
    if pair is None:
        ctx.rng.setstate(state)
    return pair


def _pick_faults(
    spec: Family,
    ctx: FaultContext,
    model: Forwarding,
    count: int,
    pair: Pair | None = None,
) -> list[FaultPlan]:
    """Up to ``count`` faults (at least one), each with a symptom of its own that the others
    leave observable, together leaving every host pair's fate certain; with a cascade
    ``pair``, the pair first (the masked fault's symptoms are the masking one's), then faults
    that leave the cascade as it is.

    Each fault is drawn evenly over the (type, device) pairs the network offers, so a type that
    fits few places is no likelier there than any other type is at any of its places."""
    designed = designed_paths(model)
    plans: list[FaultPlan] = []
    owns: list[frozenset[Observation]] = []
    impact, flows = Impact(), frozenset[Observation]()
    if pair is not None:
        ctx.used |= pair.taken
        for plan in (pair.masking, pair.masked):
            plans.append(plan)
            owns.append(outlook(model, plan.impact, designed).observations | plan.flows)
            impact, flows = impact.merge(plan.impact), flows | plan.flows
    for _ in range(count - len(plans)):
        offers = _offers(spec, ctx)
        keys = sorted(offers)
        while keys:
            key = ctx.rng.choice(keys)
            keys.remove(key)
            plan, taken = offers.pop(key)
            alone = outlook(model, plan.impact, designed)
            own = alone.observations | plan.flows
            if not own or not alone.sure:
                continue  # no symptom of its own: an agent could not find it from the brief
            merged = impact.merge(plan.impact)
            together = outlook(model, merged, designed)
            observed = together.observations | flows | plan.flows
            kept = pair is None or holds(model, [*plans, plan], 0, 1, designed)
            if together.sure and kept and all(mine & observed for mine in [*owns, own]):
                ctx.used |= taken
                plans.append(plan)
                owns.append(own)
                impact, flows = merged, flows | plan.flows
                break
    if not plans:
        raise ScenarioError(f"{spec.name}: found no fault with a symptom")
    return plans


def _offers(spec: Family, ctx: FaultContext) -> dict[tuple[str, str], tuple[FaultPlan, set[str]]]:
    """Where each fault type can land now: a plan per (type, device), with the keys it takes."""
    offers: dict[tuple[str, str], tuple[FaultPlan, set[str]]] = {}
    for kind in spec.faults:
        for _ in range(TRIES):
            before = set(ctx.used)
            plan = kind.draw(ctx)
            taken, ctx.used = ctx.used - before, before
            if plan is not None:
                offers.setdefault((kind.id, plan.fault.device), (plan, taken))
    return offers


def ping_test(network: Network, a: str, b: str, tag: str) -> PingTest:
    return PingTest(
        id=f"{tag}:ping:{a}-{b}",
        description=f"{a} can ping {b} ({network.host_address(b)})",
        device=a,
        params=PingParams(target=network.host_address(b), expect=True),
    )


def _reported(
    model: Forwarding,
    real: list[FaultPlan],
    observed: frozenset[Observation],
    designed: dict[tuple[str, str], tuple[str, ...]],
    rng: random.Random,
) -> list[Observation]:
    """Some of what is observed: one observation of each fault's own (when the others leave
    one true; what one flow or pair shows before what a whole host shows), and each other one
    by chance."""
    chosen: set[Observation] = set()
    for plan in rng.sample(real, len(real)):
        own = outlook(model, plan.impact, designed).observations | plan.flows
        covering = sorted(own & observed)
        narrow = [seen for seen in covering if seen.kind != "isolated"]
        if covering and not chosen & set(covering):
            chosen.add(rng.choice(narrow or covering))
    for seen in sorted(observed - chosen):
        if rng.random() < EXTRA_REPORTS:
            chosen.add(seen)
    isolated = {seen.hosts[0] for seen in chosen if seen.kind == "isolated"}
    return sorted(
        seen for seen in chosen if seen.kind != "broken" or not isolated & set(seen.hosts)
    )


def _assemble(
    spec: Family,
    model: Forwarding,
    plans: list[FaultPlan],
    lab_name: str,
    rng: random.Random,
    policy: Policy | None,
    cascade: Cascade | None = None,
) -> tuple[HiddenHalf, str, list[str]]:
    network = model.network
    impact = Impact()
    for plan in plans:
        impact = impact.merge(plan.impact)
    real = [p for p in plans if not p.fault.red_herring]
    herrings = [p for p in plans if p.fault.red_herring]
    designed = designed_paths(model)
    seen = outlook(model, impact, designed)
    observed = seen.observations.union(*(plan.flows for plan in real))
    states = model.ping_states(impact)
    pairs = list(itertools.combinations(sorted(network.lans), 2))
    broken = [(a, b) for a, b in pairs if states[a, b] == "broken"]
    intact = [(a, b) for a, b in pairs if states[a, b] == "works"]
    targets: list[HiddenTest] = [ping_test(network, a, b, "target") for a, b in broken]
    targets += [test for plan in real for test in plan.healthy]
    targets += [
        traceroute_test(network, a, b, list(path)) for (a, b), path in sorted(seen.detours.items())
    ]
    targets = list({test.id: test for test in targets}.values())
    guards: list[HiddenTest] = [ping_test(network, a, b, "guard") for a, b in intact]
    guards += link_guards(network, impact, spec.network_routing)
    lab = render_lab(network, spec.network_routing, lab_name)
    if spec.furnish is not None:
        spec.furnish(lab, network)
    constraints: list[str] = []
    if policy is not None:
        install_policy(lab, network, policy)
        target_ids = {t.id for t in targets}
        guards += [p for p in policy_matrix(network, policy) if p.id not in target_ids]
        constraints.append(policy_text(network, policy, rng))
    constraints.append(routing_rule(spec.repair or spec.network_routing, rng))
    hidden = HiddenHalf(
        lab=lab,
        faults=[plan.fault for plan in plans],
        solution=[call for plan in _repair_order(real, cascade) for call in plan.fault.fix],
        targets=targets,
        guards=guards,
        adherence=[test for plan in herrings for test in plan.healthy],
        cascade=cascade,
    )
    showing = [p for i, p in enumerate(real) if cascade is None or i != cascade.masked]
    reported = _reported(model, showing, observed, designed, rng)
    addresses = {h: network.host_address(h) for h in network.lans}
    brief = reactive_brief(reported, spec.network_routing, addresses, constraints, rng)
    return hidden, brief, constraints


def _repair_order(real: list[FaultPlan], cascade: Cascade | None) -> list[FaultPlan]:
    """The faults in the order the solution repairs them: the last drawn first, but the
    masking fault of a cascade before all."""
    order = list(reversed(real))
    if cascade is not None:
        masking = real[cascade.masking]
        order = [masking, *(plan for plan in order if plan is not masking)]
    return order


def link_guards(network: Network, impact: Impact, routing: Routing) -> list[HiddenTest]:
    """The protocol state of every transit link no fault takes down (or makes one-way): its
    IS-IS, OSPF or OSPFv3 adjacency or BGP session, or under RIP the updates it carries; none
    under static routing."""
    if routing == "rip":
        return list(rip.link_guards(network, impact))
    if routing not in ("ospf", "bgp", "ibgp", "isis", "ospf6", "bgp6"):
        return []
    guards: list[HiddenTest] = []
    for a, b in network.transit_links():
        if frozenset((a, b)) in impact.down_links:
            continue
        if (a, b) in impact.silenced or (b, a) in impact.silenced:
            continue
        if routing == "ospf6":
            guards.append(ospf6_adjacency_test(network, a, b, True, "guard"))
        elif routing == "isis":
            guards.append(isis_adjacency_test(network, a, b, True, "guard"))
        elif ospf_link(network, routing, a, b):
            neighbour = network.node(b).loopback
            assert neighbour is not None
            guards.append(
                OspfAdjacencyTest(
                    id=f"guard:ospf_full:{a}-{b}",
                    description=f"{a} has a Full OSPF adjacency with {b}",
                    device=a,
                    params=OspfAdjacencyParams(neighbor=neighbour, expect=True),
                )
            )
        else:
            peer = network.node(b).iface_to(a).address.split("/")[0]
            guards.append(
                BgpSessionTest(
                    id=f"guard:bgp_session:{a}-{b}",
                    description=f"{a} has an Established BGP session with {b}",
                    device=a,
                    params=BgpSessionParams(peer=peer, expect=True),
                )
            )
    return guards
