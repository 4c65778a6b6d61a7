"""`generate`: (family, level, seed) -> one `Scenario`, deterministically.

The family comes from the registry; its planner draws the network, and a reactive family's
faults (`scenarios.reactive`) or a constructive family's task (`scenarios.constructive`,
`scenarios.firewall_build`) give the hidden half and the brief. About one reactive instance in
ten is a healthy control (`scenarios.healthy`), and about one level-3 instance in three begins
with a cascade (`scenarios.cascade`), both decided here from the seed.
"""

from __future__ import annotations

import random

from netdojo.scenarios import registry
from netdojo.scenarios.cascade import is_cascade
from netdojo.scenarios.constructive import constructive_hidden, intent_fits
from netdojo.scenarios.firewall_build import firewall_task
from netdojo.scenarios.healthy import healthy_half, healthy_task, is_healthy_control
from netdojo.scenarios.model import (
    HiddenHalf,
    PublicHalf,
    Scenario,
    scenario_id,
)
from netdojo.scenarios.network import Network, public_facts, render_lab
from netdojo.scenarios.reactive import reactive_task
from netdojo.scenarios.registry import Family, ScenarioError
from netdojo.scenarios.topology import make_topology, router_count

MAX_ATTEMPTS = 200


def check_choice(name: str, level: int, seed: int) -> Family:
    """The family ``name``, once ``level`` and ``seed`` are known to suit it."""
    spec = registry.family(name)
    if level not in spec.levels:
        levels = ", ".join(map(str, spec.levels))
        raise ScenarioError(f"unknown level {level!r}; levels are: {levels}")
    if not 0 <= seed < 2**32:
        raise ScenarioError(f"seed must be an integer in 0..{2**32 - 1}, got {seed}")
    return spec


def plan_instance(family: str, level: int, seed: int) -> tuple[Network, random.Random]:
    """The instance's network and the seeded generator, positioned to pick faults or intents."""
    spec = check_choice(family, level, seed)
    if spec.build is not None:
        raise ScenarioError(f"{spec.name}: its instances are not drawn on a routed network")
    rng = _generator(family, level, seed)
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
    return spec.plan(topology, level, rng)


def generate(family: str, level: int, seed: int) -> Scenario:
    spec = check_choice(family, level, seed)
    lab_name = f"{spec.name.split('-')[0]}{level}"
    healthy = spec.kind == "reactive" and is_healthy_control(spec.name, level, seed)
    if spec.build is not None:
        public, hidden = spec.build(level, _generator(family, level, seed), lab_name)
        return _scenario(spec, level, seed, public, healthy_half(hidden) if healthy else hidden)
    network, rng = plan_instance(family, level, seed)
    if healthy:
        hidden, brief, constraints = healthy_task(spec, network, lab_name, rng)
    elif spec.kind == "reactive":
        cascade = is_cascade(family, level, seed)
        hidden, brief, constraints = reactive_task(spec, level, network, lab_name, rng, cascade)
    elif spec.firewall:
        lab = render_lab(network, spec.network_routing, lab_name)
        hidden, brief, constraints = firewall_task(network, lab, rng)
    else:
        hidden, brief, constraints = constructive_hidden(
            network, spec.network_routing, level, lab_name, rng, spec.intent
        )
    public = PublicHalf(
        brief=brief,
        devices=public_facts(network),
        links=[(link, [dev for dev, _ in ends]) for link, ends in network.links],
        constraints=constraints,
    )
    return _scenario(spec, level, seed, public, hidden)


def _generator(family: str, level: int, seed: int) -> random.Random:
    return random.Random(f"scenario/{family}/{level}/{seed}")


def _scenario(
    spec: Family, level: int, seed: int, public: PublicHalf, hidden: HiddenHalf
) -> Scenario:
    return Scenario(
        id=scenario_id(spec.name, level, seed),
        family=spec.name,
        level=level,
        seed=seed,
        kind=spec.kind,
        public=public,
        hidden=hidden,
    )
