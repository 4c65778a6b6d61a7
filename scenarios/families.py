"""Scenario families and `generate`: (family, level, seed) -> one `Scenario`, deterministically."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

from netdojo.labs.errors import NetdojoError
from netdojo.scenarios.acl import (
    ACL_TYPES,
    Policy,
    acl_injectors,
    choose_policy,
    firewall_task,
    install_policy,
    policy_matrix,
    policy_text,
)
from netdojo.scenarios.bgp_control import BGP_CONTROL_INJECTORS
from netdojo.scenarios.briefs import reactive_brief, routing_rule
from netdojo.scenarios.constructive import IntentKind, constructive_hidden, intent_fits
from netdojo.scenarios.faults import INJECTORS, FaultContext, FaultPlan, Injector, red_herring
from netdojo.scenarios.forwarding import Forwarding, Impact
from netdojo.scenarios.ibgp import IBGP_INJECTORS, as_ibgp, with_externals
from netdojo.scenarios.model import (
    DeviceFacts,
    HiddenHalf,
    InterfaceFacts,
    Kind,
    Probe,
    ProbeKind,
    PublicHalf,
    Scenario,
    scenario_id,
)
from netdojo.scenarios.multiarea import MULTIAREA_INJECTORS, plan_areas
from netdojo.scenarios.network import Network, Routing, ospf_link, plan_network, render_lab
from netdojo.scenarios.path_intent import traceroute_probe
from netdojo.scenarios.symptoms import Observation, designed_paths, outlook
from netdojo.scenarios.topology import Shape, make_topology, router_count

LEVELS = (1, 2, 3)
REAL_FAULTS_BY_LEVEL = {1: {1: 1, 2: 2}, 2: {1: 1, 2: 3, 3: 3}, 3: {2: 1, 3: 2, 4: 1}}  # weights
EXTRA_REPORTS = 0.25  # chance that an observation no fault needs for its cover is reported too
MAX_ATTEMPTS = 200
TRIES = 6  # draws of each fault type, to find the places it can land


class ScenarioError(NetdojoError):
    """A family, level or seed that cannot produce a scenario."""


@dataclass(frozen=True)
class Family:
    name: str
    kind: Kind
    routing: Routing
    types: tuple[str, ...]
    shapes: dict[int, tuple[Shape, ...]]
    summary: str
    firewall: bool = False  # a server behind an iptables policy (see scenarios.acl)
    extra_hosts: int = 0
    areas: bool = False  # multi-area OSPF with redistributed LANs (see scenarios.multiarea)
    intent: IntentKind | None = None  # a policy on top of a build (scenarios.constructive)
    repair: str | None = None  # how a repair must be made (briefs.ROUTING_RULES); else routing


REDUNDANT: dict[int, tuple[Shape, ...]] = {
    1: ("chain", "tree", "star", "ring"),
    2: ("tree", "ring", "random", "leaf-spine"),
    3: ("random", "leaf-spine", "tree", "ring"),
}
LOOP_FREE: dict[int, tuple[Shape, ...]] = {
    1: ("chain", "tree", "star"),
    2: ("tree", "ring", "random"),
    3: ("random", "tree", "leaf-spine"),
}
CYCLES: dict[int, tuple[Shape, ...]] = {
    1: ("ring",),
    2: ("ring", "leaf-spine"),
    3: ("leaf-spine", "ring"),
}
TREES: dict[int, tuple[Shape, ...]] = {1: ("chain", "tree", "star"), 2: ("tree",), 3: ("tree",)}
DETOURS: dict[int, tuple[Shape, ...]] = {
    1: ("ring", "random"),
    2: ("random", "ring"),
    3: ("random", "ring"),
}
ALL_INJECTORS: dict[str, Injector] = (
    INJECTORS | MULTIAREA_INJECTORS | BGP_CONTROL_INJECTORS | IBGP_INJECTORS
)

FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family(
            "static-routing",
            "reactive",
            "static",
            (
                "static.missing_route",
                "static.wrong_next_hop",
                "static.wrong_prefix",
                "static.blackhole",
                "static.more_specific_hijack",
                "iface.admin_down",
                "iface.wrong_address",
                "iface.lan_port_down",
            ),
            LOOP_FREE,
            "Routers forward with static routes; repair routes and links that broke forwarding.",
        ),
        Family(
            "ospf-adjacency",
            "reactive",
            "ospf",
            (
                "ospf.area_mismatch",
                "ospf.hello_mismatch",
                "ospf.dead_mismatch",
                "ospf.passive_transit",
                "ospf.missing_network_transit",
                "ospf.network_type_mismatch",
                "ospf.auth_key_mismatch",
                "ospf.auth_one_side",
                "iface.mtu_mismatch",
                "iface.admin_down",
                "iface.wrong_address",
            ),
            REDUNDANT,
            "A single-area OSPF network lost adjacencies; restore them.",
        ),
        Family(
            "ospf-routing",
            "reactive",
            "ospf",
            (
                "ospf.missing_network_stub",
                "ospf.cost_steering",
                "static.blackhole",
                "static.more_specific_hijack",
                "static.route_override",
                "iface.lan_wrong_mask",
            ),
            REDUNDANT,
            "OSPF is up but some prefixes are missing or overridden; repair the routing.",
        ),
        Family(
            "bgp-peering",
            "reactive",
            "bgp",
            (
                "bgp.missing_neighbor",
                "bgp.md5_one_side",
                "bgp.md5_mismatch",
                "bgp.max_prefix",
                "bgp.missing_network",
            ),
            REDUNDANT,
            "Each router is its own AS, peering over eBGP; sessions or announcements broke.",
        ),
        Family(
            "ospf-multiarea",
            "reactive",
            "ospf",
            (
                "ospf.stub_area_mismatch",
                "ospf.missing_redistribution",
                "ospf.redistribution_filter",
                "ospf.router_id_clash",
                "ospf.hello_mismatch",
                "iface.admin_down",
            ),
            TREES,
            "Multi-area OSPF with externals redistributed from LANs; areas, externals or "
            "router identity broke.",
            areas=True,
        ),
        Family(
            "bgp-control",
            "reactive",
            "bgp",
            (
                "bgp.wrong_remote_as",
                "bgp.requires_policy",
                "bgp.local_pref_steering",
                "bgp.as_path_prepend_steering",
                "bgp.missing_neighbor",
            ),
            REDUNDANT,
            "One AS per router over eBGP; a peer AS, a policy requirement or a path preference "
            "went wrong.",
        ),
        Family(
            "bgp-ibgp",
            "reactive",
            "ibgp",
            (
                "bgp.next_hop_self_missing",
                "bgp.update_source_missing",
                "ospf.missing_loopback",
                "iface.admin_down",
                "static.blackhole",
            ),
            TREES,
            "A core AS runs iBGP between loopbacks over an OSPF underlay, with external ASes "
            "on border routers; the mesh, next hops or the underlay broke.",
        ),
        Family(
            "bgp-policy",
            "reactive",
            "bgp",
            (
                "bgp.prefix_list_out",
                "bgp.prefix_list_in",
                "bgp.route_map_out_deny",
                "bgp.route_map_in_deny",
                "bgp.missing_network",
            ),
            LOOP_FREE,
            "Export policy on eBGP sessions drops prefixes that other sites need.",
        ),
        Family(
            "acl-firewall",
            "reactive",
            "ospf",
            ACL_TYPES,
            REDUNDANT,
            "A server sits behind an iptables policy on a router in front of it; rules on that "
            "firewall or on a hop of the flows broke the policy.",
            firewall=True,
            extra_hosts=1,
        ),
        Family(
            "static-build",
            "constructive",
            "static",
            ("build.static_routes",),
            LOOP_FREE,
            "Routers are addressed but unrouted; add static routes for full reachability.",
        ),
        Family(
            "ospf-build",
            "constructive",
            "ospf",
            ("build.ospf_area0",),
            REDUNDANT,
            "Routers are addressed but unrouted; configure single-area OSPF.",
        ),
        Family(
            "ospf-path-build",
            "constructive",
            "ospf",
            ("build.ospf_path_intent",),
            CYCLES,
            "Routers are addressed but unrouted; build OSPF and pin one flow to a designated "
            "path with link costs.",
            intent="path",
        ),
        Family(
            "bgp-transit-build",
            "constructive",
            "bgp",
            ("build.ebgp_no_transit",),
            CYCLES,
            "Routers are addressed but unrouted; build eBGP with one AS per router, and keep one "
            "AS from giving transit.",
            intent="no_transit",
        ),
        Family(
            "bgp-exit-build",
            "constructive",
            "bgp",
            ("build.ebgp_preferred_exit",),
            DETOURS,
            "Routers are addressed but unrouted; build eBGP with one AS per router, and make "
            "one AS leave for one site through a neighbour on a longer path.",
            intent="preferred_exit",
        ),
        Family(
            "bgp-build",
            "constructive",
            "bgp",
            ("build.ebgp_per_router_as",),
            REDUNDANT,
            "Routers are addressed but unrouted; build eBGP with one AS per router.",
        ),
        Family(
            "acl-build",
            "constructive",
            "ospf",
            ("build.acl_policy",),
            REDUNDANT,
            "Routing works; write the access policy for a server as router firewall rules.",
            firewall=True,
            extra_hosts=1,
        ),
        Family(
            "host-config",
            "reactive",
            "ospf",
            (
                "host.wrong_gateway",
                "host.missing_default",
                "host.wrong_mask",
                "host.wrong_address",
                "iface.lan_wrong_mask",
                "iface.lan_port_down",
            ),
            REDUNDANT,
            "Hosts lost connectivity through their own or their gateway's settings.",
            repair="hosts",
        ),
    )
}


def check_choice(family: str, level: int, seed: int) -> Family:
    if family not in FAMILIES:
        raise ScenarioError(f"unknown family {family!r}; families are: {', '.join(FAMILIES)}")
    if level not in LEVELS:
        raise ScenarioError(f"unknown level {level!r}; levels are: {', '.join(map(str, LEVELS))}")
    if not 0 <= seed < 2**32:
        raise ScenarioError(f"seed must be an integer in 0..{2**32 - 1}, got {seed}")
    return FAMILIES[family]


def plan_instance(family: str, level: int, seed: int) -> tuple[Network, random.Random]:
    """The instance's network and the seeded generator, positioned to pick faults or intents."""
    spec = check_choice(family, level, seed)
    rng = random.Random(f"scenario/{family}/{level}/{seed}")
    for _ in range(MAX_ATTEMPTS):
        network = _draw_network(spec, level, rng)
        if spec.intent is None or intent_fits(network, spec.intent):
            return network, rng
    raise ScenarioError(f"{spec.name}: no level {level} network offers its intent a choice")


def _draw_network(spec: Family, level: int, rng: random.Random) -> Network:
    """A network of the family's shapes at ``level``; drawn again, from where the generator
    stands, when the family's intent finds no choice in it."""
    shape = rng.choice(spec.shapes[level])
    topology = make_topology(shape, router_count(level, rng), rng.randrange(2**31))
    if spec.routing == "ibgp":
        topology, externals, hosted = with_externals(topology, level, rng)
        network = as_ibgp(plan_network(topology, level, rng, 0, hosted), externals, rng)
    else:
        network = plan_network(topology, level, rng, spec.extra_hosts)
    if spec.areas:
        network = plan_areas(network, rng)
    return network


def generate(family: str, level: int, seed: int) -> Scenario:
    network, rng = plan_instance(family, level, seed)
    spec = FAMILIES[family]
    if spec.kind == "constructive":
        return _assemble_constructive(spec, level, seed, network, rng)
    ctx = FaultContext(network=network, routing=spec.routing, rng=rng)
    model = Forwarding(network, spec.routing)
    policy = choose_policy(network, rng) if spec.firewall else None
    injectors = acl_injectors(policy, network) if policy else ALL_INJECTORS
    weights = REAL_FAULTS_BY_LEVEL[level]
    count = rng.choices(list(weights), list(weights.values()))[0]
    plans = _pick_faults(spec, ctx, model, count, injectors)
    if level >= 2:
        plans.append(red_herring(ctx))
    return _assemble(spec, level, seed, model, plans, rng, policy)


def _pick_faults(
    spec: Family,
    ctx: FaultContext,
    model: Forwarding,
    count: int,
    injectors: dict[str, Injector],
) -> list[FaultPlan]:
    """Up to ``count`` faults (at least one), each with a symptom of its own that the others
    leave observable, together leaving every host pair's fate certain.

    Each fault is drawn evenly over the (type, device) pairs the network offers, so a type that
    fits few places is no likelier there than any other type is at any of its places."""
    designed = designed_paths(model)
    plans: list[FaultPlan] = []
    owns: list[frozenset[Observation]] = []
    impact, flows = Impact(), frozenset[Observation]()
    for _ in range(count):
        offers = _offers(spec, ctx, injectors)
        while offers:
            key = ctx.rng.choice(sorted(offers))
            plan, taken = offers.pop(key)
            alone = outlook(model, plan.impact, designed)
            own = alone.observations | plan.flows
            if not own or not alone.sure:
                continue  # no symptom of its own: an agent could not find it from the brief
            merged = impact.merge(plan.impact)
            together = outlook(model, merged, designed)
            observed = together.observations | flows | plan.flows
            if together.sure and all(mine & observed for mine in [*owns, own]):
                ctx.used |= taken
                plans.append(plan)
                owns.append(own)
                impact, flows = merged, flows | plan.flows
                break
    if not plans:
        raise ScenarioError(f"{spec.name}: found no fault with a symptom")
    return plans


def _offers(
    spec: Family, ctx: FaultContext, injectors: dict[str, Injector]
) -> dict[tuple[str, str], tuple[FaultPlan, set[str]]]:
    """Where each fault type can land now: a plan per (type, device), with the keys it takes."""
    offers: dict[tuple[str, str], tuple[FaultPlan, set[str]]] = {}
    for type_ in spec.types:
        for _ in range(TRIES):
            before = set(ctx.used)
            plan = injectors[type_](ctx)
            taken, ctx.used = ctx.used - before, before
            if plan is not None:
                offers.setdefault((type_, plan.fault.device), (plan, taken))
    return offers


def _ping(network: Network, a: str, b: str, tag: str) -> Probe:
    return Probe(
        id=f"{tag}:ping:{a}-{b}",
        description=f"{a} can ping {b} ({network.host_address(b)})",
        kind="ping",
        device=a,
        params={"target": network.host_address(b), "expect": True},
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
    level: int,
    seed: int,
    model: Forwarding,
    plans: list[FaultPlan],
    rng: random.Random,
    policy: Policy | None,
) -> Scenario:
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
    targets = [_ping(network, a, b, "target") for a, b in broken]
    targets += [probe for plan in real for probe in plan.healthy]
    targets += [
        traceroute_probe(network, a, b, list(path)) for (a, b), path in sorted(seen.detours.items())
    ]
    targets = list({probe.id: probe for probe in targets}.values())
    guards = [_ping(network, a, b, "guard") for a, b in intact]
    if spec.routing in ("ospf", "bgp", "ibgp"):
        guards += _link_guards(network, impact, spec.routing)
    lab = render_lab(network, spec.routing, _lab_name(spec, level))
    constraints: list[str] = []
    if policy is not None:
        install_policy(lab, network, policy)
        target_ids = {t.id for t in targets}
        guards += [p for p in policy_matrix(network, policy) if p.id not in target_ids]
        constraints.append(policy_text(network, policy, rng))
    constraints.append(routing_rule(spec.repair or spec.routing, rng))
    hidden = HiddenHalf(
        lab=lab,
        faults=[plan.fault for plan in plans],
        solution=[call for plan in reversed(real) for call in plan.fault.fix],
        targets=targets,
        guards=guards,
        adherence=[probe for plan in herrings for probe in plan.healthy],
    )
    reported = _reported(model, real, observed, designed, rng)
    addresses = {h: network.host_address(h) for h in network.lans}
    brief = reactive_brief(reported, spec.routing, addresses, constraints, rng)
    return _scenario(spec, level, seed, network, brief, constraints, hidden)


def _scenario(
    spec: Family,
    level: int,
    seed: int,
    network: Network,
    brief: str,
    constraints: list[str],
    hidden: HiddenHalf,
) -> Scenario:
    return Scenario(
        id=scenario_id(spec.name, level, seed),
        family=spec.name,
        level=level,
        seed=seed,
        kind=spec.kind,
        public=PublicHalf(
            brief=brief,
            devices=_facts(network),
            links=[(link, [dev for dev, _ in ends]) for link, ends in network.links],
            constraints=constraints,
        ),
        hidden=hidden,
    )


def _assemble_constructive(
    spec: Family, level: int, seed: int, network: Network, rng: random.Random
) -> Scenario:
    if spec.firewall:
        lab = render_lab(network, spec.routing, _lab_name(spec, level))
        hidden, brief, rules = firewall_task(network, lab, rng)
    else:
        hidden, brief, rules = constructive_hidden(
            network, spec.routing, level, _lab_name(spec, level), rng, spec.intent
        )
    return _scenario(spec, level, seed, network, brief, rules, hidden)


def _lab_name(spec: Family, level: int) -> str:
    return f"{spec.name.split('-')[0]}{level}"


def _link_guards(network: Network, impact: Impact, routing: Routing) -> list[Probe]:
    """The OSPF adjacency or BGP session of every transit link no fault takes down."""
    guards = []
    for a, b in network.transit_links():
        if frozenset((a, b)) in impact.down_links:
            continue
        kind: ProbeKind
        if ospf_link(network, routing, a, b):
            neighbour = network.node(b).loopback
            kind, params, what = "ospf_full", {"neighbor": neighbour}, "a Full OSPF adjacency"
        else:
            peer = network.node(b).iface_to(a).address.split("/")[0]
            kind, params, what = "bgp_session", {"peer": peer}, "an Established BGP session"
        guards.append(
            Probe(
                id=f"guard:{kind}:{a}-{b}",
                description=f"{a} has {what} with {b}",
                kind=kind,
                device=a,
                params={**params, "expect": True},
            )
        )
    return guards


def _facts(network: Network) -> list[DeviceFacts]:
    return [
        DeviceFacts(
            name=node.name,
            role=node.role,
            interfaces=[
                InterfaceFacts(name=i.name, link=i.link, address=i.address) for i in node.ifaces
            ],
        )
        for node in network.nodes
    ]
