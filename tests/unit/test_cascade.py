"""Cascades at level 3: a fault whose every symptom another fault shows too, found only once
that one is repaired."""

from __future__ import annotations

import itertools
from functools import cache

import pytest

from netdojo.scenarios import registry
from netdojo.scenarios.cascade import MIN_HOPS, SHARE, hops_apart, is_cascade, symptoms
from netdojo.scenarios.faults.base import FaultPlan
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.generate import generate, plan_instance
from netdojo.scenarios.healthy import is_healthy_control
from netdojo.scenarios.model import Scenario
from netdojo.scenarios.reactive import Drawn, draw_faults, reactive_task
from netdojo.scenarios.symptoms import designed_paths

from .instances import instance

GENERIC = sorted(
    name
    for name, spec in registry.families().items()
    if spec.kind == "reactive" and spec.build is None
)
NEVER = {"host-config", "path-mtu", "dhcp-relay"}
"""Families whose faults cannot mask one another: a host's fault is one link from the only
faults that break the same pairs, path-MTU faults never stall the same flow, and each relay
fault cuts off a host of its own."""
SEEDS = range(1, 60)


def _drawn(family: str, seed: int) -> Drawn:
    network, rng = plan_instance(family, 3, seed)
    return draw_faults(registry.family(family), 3, network, rng, cascade=True)


@cache
def _cascades(family: str) -> list[int]:
    """The seeds among `SEEDS` whose level-3 instance of ``family`` is a cascade."""
    return [
        seed
        for seed in SEEDS
        if is_cascade(family, 3, seed)
        and not is_healthy_control(family, 3, seed)
        and instance(family, 3, seed).hidden.cascade is not None
    ]


def test_about_one_level_three_instance_in_three_is_drawn_as_a_cascade() -> None:
    picked = [seed for seed in range(3000) if is_cascade("ospf-routing", 3, seed)]
    assert 3000 / SHARE * 0.9 < len(picked) < 3000 / SHARE * 1.1
    assert not any(is_cascade("ospf-routing", level, s) for level in (1, 2) for s in range(300))


@pytest.mark.parametrize("family", [name for name in GENERIC if name not in NEVER])
def test_every_generic_family_draws_cascades_at_level_three(family: str) -> None:
    assert _cascades(family)


@pytest.mark.parametrize("family", sorted(NEVER))
def test_a_cascade_seed_without_a_cascade_is_the_instance_it_would_be_anyway(family: str) -> None:
    seed = next(
        s for s in SEEDS if is_cascade(family, 3, s) and not is_healthy_control(family, 3, s)
    )
    scenario = generate(family, 3, seed)
    network, rng = plan_instance(family, 3, seed)
    hidden, brief, _ = reactive_task(
        registry.family(family), 3, network, scenario.hidden.lab.name, rng
    )
    assert scenario.hidden.cascade is None
    assert hidden == scenario.hidden and brief == scenario.public.brief


@pytest.mark.parametrize("family", [name for name in GENERIC if name not in NEVER])
def test_the_masked_fault_shows_nothing_of_its_own_until_the_masking_one_is_fixed(
    family: str,
) -> None:
    for seed in _cascades(family)[:3]:
        drawn = _drawn(family, seed)
        assert drawn.cascade is not None
        real = [plan for plan in drawn.plans if not plan.fault.red_herring]
        masking, masked = real[drawn.cascade.masking], real[drawn.cascade.masked]
        model, designed = drawn.model, designed_paths(drawn.model)
        own = symptoms(model, [masked], designed).observations
        assert own and own <= symptoms(model, [masking], designed).observations
        others = [plan for plan in real if plan is not masked]
        every = symptoms(model, real, designed).observations
        assert every == symptoms(model, others, designed).observations
        repaired = [plan for plan in real if plan is not masking]
        assert own <= symptoms(model, repaired, designed).observations
        broken = _broken(drawn, [masked])
        assert sorted(broken) == drawn.cascade.pairs
        assert broken <= _broken(drawn, [masking]) and broken <= _broken(drawn, repaired)
        apart = hops_apart(model.network)
        assert apart(masking.fault.device, masked.fault.device) >= MIN_HOPS


def _broken(drawn: Drawn, plans: list[FaultPlan]) -> set[tuple[str, str]]:
    impact = Impact()
    for plan in plans:
        impact = impact.merge(plan.impact)
    states = drawn.model.ping_states(impact)
    hosts = drawn.model.hosts
    return {(a, b) for a, b in itertools.combinations(hosts, 2) if states[a, b] == "broken"}


@pytest.mark.parametrize("family", [name for name in GENERIC if name not in NEVER])
def test_a_cascade_targets_every_pair_and_repairs_the_masking_fault_first(family: str) -> None:
    seed = _cascades(family)[0]
    scenario = instance(family, 3, seed)
    hidden = scenario.hidden
    cascade = hidden.cascade
    assert cascade is not None
    targets = {test.id for test in hidden.targets}
    for a, b in [*cascade.pairs, *cascade.revived]:
        assert f"target:ping:{a}-{b}" in targets
    fix = hidden.faults[cascade.masking].fix
    assert hidden.solution[: len(fix)] == fix
    assert not hidden.faults[cascade.masked].red_herring
    assert hidden.faults[cascade.masking].device != hidden.faults[cascade.masked].device


def test_the_cascade_is_recorded_in_the_hidden_half_only() -> None:
    seed = _cascades("static-routing")[0]
    scenario = instance("static-routing", 3, seed)
    assert '"cascade":{' in scenario.hidden.model_dump_json()
    assert "cascade" not in scenario.public.model_dump_json()
    plain = next(s for s in SEEDS if not is_cascade("static-routing", 3, s))
    assert "cascade" not in instance("static-routing", 3, plain).model_dump_json()


@pytest.mark.parametrize("family", ["ospf-adjacency", "acl-firewall", "rip-routing"])
def test_cascades_are_deterministic(family: str) -> None:
    seed = _cascades(family)[0]
    first: Scenario = generate(family, 3, seed)
    assert first.model_dump_json() == generate(family, 3, seed).model_dump_json()
    assert first.hidden.cascade == _drawn(family, seed).cascade
