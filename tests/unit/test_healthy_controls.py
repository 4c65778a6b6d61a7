"""Healthy controls: one reactive instance in ten, chosen from the seed, with nothing wrong."""

from __future__ import annotations

import itertools

import pytest

from netdojo.scenarios import briefs, registry
from netdojo.scenarios.generate import generate
from netdojo.scenarios.healthy import RUN, is_healthy_control

REACTIVE = sorted(name for name, f in registry.families().items() if f.kind == "reactive")
NETWORKED = [name for name in REACTIVE if registry.family(name).build is None]
CHANGED_LOW_SEEDS = {
    ("bgp-control", 1, 1), ("bgp-control", 3, 2), ("host-config", 2, 1), ("ospf-routing", 1, 3),
}  # fmt: skip
"""The instances among seeds 1-3 that became healthy controls when controls were introduced."""
FAMILIES_BEFORE_CONTROLS = (
    "acl-firewall", "bgp-control", "bgp-ibgp", "bgp-peering", "bgp-policy", "host-config",
    "k8s-policy-repair", "ospf-adjacency", "ospf-multiarea", "ospf-routing", "static-routing",
)  # fmt: skip
"""The reactive families there were then; families added since start with controls."""


def _controls(family: str, level: int, seeds: range) -> list[int]:
    return [seed for seed in seeds if is_healthy_control(family, level, seed)]


@pytest.mark.parametrize("family", REACTIVE)
def test_exactly_one_seed_in_each_run_of_ten_is_a_control(family: str) -> None:
    for level in registry.family(family).levels:
        for start in range(0, 200, RUN):
            assert len(_controls(family, level, range(start, start + RUN))) == 1


def test_which_seeds_are_controls_differs_between_families_and_levels() -> None:
    picks = {
        (family, level): tuple(_controls(family, level, range(0, 100)))
        for family in REACTIVE
        for level in (1, 2, 3)
    }
    assert len(set(picks.values())) > len(picks) // 2


def test_the_low_seeds_that_became_controls_are_the_ones_listed() -> None:
    found = {
        (family, level, seed)
        for family in FAMILIES_BEFORE_CONTROLS
        for level, seed in itertools.product((1, 2, 3), (1, 2, 3))
        if is_healthy_control(family, level, seed)
    }
    assert found == CHANGED_LOW_SEEDS


def test_constructive_instances_are_never_controls() -> None:
    for family in (f for f in registry.families().values() if f.kind == "constructive"):
        assert not any(generate(family.name, 1, seed).hidden.healthy for seed in range(10))


def test_a_faulted_instance_is_the_same_as_before_controls_existed() -> None:
    assert generate("ospf-adjacency", 2, 11).digest() == "0c05fb3e5a9f3468"
    assert generate("k8s-policy-repair", 1, 1).digest() == "ff2f55028926b0bf"
    assert generate("acl-firewall", 3, 3).digest() == "df2b20f4f7626354"


@pytest.mark.parametrize("family", REACTIVE)
def test_a_control_has_no_fault_no_target_and_guards_the_whole_network(family: str) -> None:
    for level in registry.family(family).levels:
        (seed,) = _controls(family, level, range(10, 20))
        scenario = generate(family, level, seed)
        hidden = scenario.hidden
        assert hidden.healthy and scenario.kind == "reactive"
        assert not hidden.faults and not hidden.targets and not hidden.solution
        assert not hidden.adherence and hidden.guards
        assert len({t.id for t in hidden.guards}) == len(hidden.guards)
        assert not any(t.id.startswith("target") for t in hidden.guards)
        if family in NETWORKED:  # a family with its own plan guards the flows its design has
            hosts = sorted(d.name for d in scenario.public.devices if d.role == "host")
            pinged = {t.id for t in hidden.guards if t.kind == "ping"}
            for a, b in itertools.combinations(hosts, 2):
                assert f"guard:ping:{a}-{b}" in pinged


def test_the_healthy_mark_is_kept_in_the_hidden_half_only() -> None:
    (seed,) = _controls("static-routing", 1, range(0, 10))
    scenario = generate("static-routing", 1, seed)
    assert '"healthy":true' in scenario.hidden.model_dump_json()
    assert "healthy" not in scenario.public.model_dump_json()
    faulted = generate("static-routing", 1, next(s for s in range(10) if s != seed))
    assert "healthy" not in faulted.model_dump_json()


@pytest.mark.parametrize("family", NETWORKED)
def test_a_controls_brief_is_worded_as_a_faulted_one_is(family: str) -> None:
    """Its opener and its care rule come from the forms every reactive brief uses, and it
    reports at least one symptom: the wording cannot tell it from a faulted instance."""
    forms = (briefs.OPENERS, briefs.CAREFUL)
    for level in (1, 2, 3):
        for seed in _controls(family, level, range(0, 60)):
            brief = generate(family, level, seed).public.brief
            lowered = brief.lower()
            for choices in forms:
                assert any(c.lower() in lowered for c in choices), (family, level, seed, brief)
            for word in ("healthy control", "nothing is wrong", "no fault", "cleared"):
                assert word not in lowered
