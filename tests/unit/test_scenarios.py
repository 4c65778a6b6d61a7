"""Scenario generation: deterministic, well-formed, briefs that vary and hide the answer."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterable

import pytest
from typer.testing import CliRunner

from netdojo.cli import app
from netdojo.scenarios import briefs, registry
from netdojo.scenarios.generate import generate
from netdojo.scenarios.model import Scenario
from netdojo.scenarios.reactive import REAL_FAULTS_BY_LEVEL
from netdojo.scenarios.registry import LEVELS, ScenarioError

from .instances import instance

runner = CliRunner()
SEEDS = range(1, 9)
NETWORKED = sorted(name for name, f in registry.families().items() if f.build is None)
"""Families drawn on a routed network (the Kubernetes ones have tests of their own)."""


@pytest.mark.parametrize("family", NETWORKED)
@pytest.mark.parametrize("level", LEVELS)
def test_instances_are_well_formed(family: str, level: int) -> None:
    for seed in SEEDS:
        scenario = instance(family, level, seed)
        hidden = scenario.hidden
        devices = {d.name for d in hidden.lab.devices}
        real = [f for f in hidden.faults if not f.red_herring]
        if hidden.healthy:
            assert not hidden.faults and not hidden.targets and not hidden.solution
            assert hidden.guards and all(test.device in devices for test in hidden.guards)
            continue
        if scenario.kind == "reactive":
            assert 1 <= len(real) <= max(REAL_FAULTS_BY_LEVEL[level])
            assert (len(hidden.faults) > len(real)) == (level >= 2)
            assert {f.type for f in real} <= set(registry.family(family).types)
        else:
            assert not hidden.faults and hidden.adherence
            assert len(scenario.public.constraints) >= 2
        assert hidden.targets and hidden.solution
        for test in [*hidden.targets, *hidden.guards, *hidden.adherence]:
            assert test.device in devices
        for call in hidden.solution:
            assert call.arguments["device"] in devices
        assert len({p.id for p in hidden.targets + hidden.guards}) == len(
            hidden.targets + hidden.guards
        )


def test_same_choice_gives_the_same_instance_in_another_process() -> None:
    code = (
        "from netdojo.scenarios.generate import generate; "
        "print(generate('ospf-adjacency', 2, 11).model_dump_json())"
    )
    other = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env={"PYTHONHASHSEED": "99"},
    )  # fmt: skip
    here = generate("ospf-adjacency", 2, 11)
    assert other.stdout.strip() == here.model_dump_json()
    assert json.loads(other.stdout)["id"] == here.id


def test_different_seeds_give_different_networks() -> None:
    ids = {generate("static-routing", 1, seed).id for seed in range(1, 21)}
    labs = {
        generate("static-routing", 1, seed).hidden.lab.model_dump_json() for seed in range(1, 21)
    }
    assert len(ids) == 20 and len(labs) == 20


REACTIVE = [name for name in NETWORKED if registry.family(name).kind == "reactive"]
LINK_FAULTS = {"iface.admin_down", "iface.wrong_address"}
LINK_STATE = ("ospf_full", "isis_adjacency", "bgp_session")
ROUTED_WITH_LINK_FAULTS = sorted(
    name
    for name, family in registry.families().items()
    if family.routing != "static" and LINK_FAULTS & set(family.types)
)


@pytest.mark.parametrize("family", ROUTED_WITH_LINK_FAULTS)
def test_a_routed_link_fault_is_judged_by_the_protocol_on_its_link(family: str) -> None:
    """A link taken down on a routed network is repaired only when its adjacency or session is
    back (RIP: its updates arrive again), even where no host's path crosses it (a router chain
    with no LAN behind it)."""
    checked = 0
    for seed in [*range(1, 41), 2353]:
        hidden = instance(family, 1, seed).hidden
        for fault in hidden.faults:
            if fault.red_herring or fault.type not in LINK_FAULTS:
                continue
            checked += 1
            assert any(
                t.device == fault.device
                and (
                    t.kind in LINK_STATE
                    or t.id.startswith(f"{fault.type}:rip:{fault.device}<-")  # RIP updates
                )
                for t in hidden.targets
            ), (family, seed, fault.type, fault.device)
    assert checked


@pytest.mark.parametrize("family", REACTIVE)
def test_briefs_vary_and_keep_their_facts(family: str) -> None:
    briefs = []
    for seed in range(1, 31):
        scenario = instance(family, 1, seed)
        brief = scenario.public.brief
        briefs.append(brief)
        addresses = {
            i.address.split("/")[0]
            for d in scenario.public.devices
            if d.role == "host"
            for i in d.interfaces
            if i.address
        }
        mentioned = set(re.findall(r"\d+\.\d+\.\d+\.\d+", brief))
        assert mentioned <= addresses, "a brief may only cite real host addresses"
    assert len(set(briefs)) == len(briefs)
    skeletons = {re.sub(r"[\w.]*\d[\w.]*", "#", b) for b in briefs}
    assert len(skeletons) >= 15, "wording must vary, not only names and numbers"


def test_briefs_never_name_the_fault_or_its_place() -> None:
    words = {"mtu", "hello", "dead", "area", "passive", "blackhole", "mask", "gateway"}
    words |= {"overload", "metric", "password", "level-", "net "}
    words |= {"next hop", "next-hop", "network statement", "admin", "shutdown", "prefix"}
    for family in REACTIVE:
        for level in LEVELS:
            for seed in SEEDS:
                scenario = instance(family, level, seed)
                brief = scenario.public.brief
                for rule in scenario.public.constraints:  # how to repair, the same for a family
                    brief = brief.replace(rule, "")
                brief = brief.lower()
                assert not any(word in brief for word in words), brief
                routers = {d.name for d in scenario.public.devices if d.role == "router"}
                for fault in scenario.hidden.faults:
                    if fault.device in routers:
                        assert not re.search(rf"\b{re.escape(fault.device)}\b", brief), brief


SYMPTOM_FORMS = (
    briefs.PAIR_FORMS + briefs.ISOLATION_FORMS + briefs.DETOUR_FORMS + briefs.QUIET_FORMS
    + tuple(f for forms in briefs.LOST_FORMS.values() for f in forms)
    + briefs.BLOCKED_FORMS + briefs.OPEN_FORMS + briefs.POLICY_FORMS
    + tuple(f for forms in briefs.FLOW_FORMS.values() for f in forms)
)  # fmt: skip


def _symptom_lines(brief: str) -> int:
    """How many symptom forms the brief holds, each matched whole (slots as names or numbers)."""
    text = " ".join(brief.split())
    patterns = [
        r"[\w.:-]+".join(re.escape(part) for part in re.split(r"\{\w+\}", form))
        for form in SYMPTOM_FORMS
    ]
    return sum(len(re.findall(pattern, text, re.IGNORECASE)) for pattern in patterns)


@pytest.mark.parametrize("family", REACTIVE)
def test_every_brief_reports_a_symptom_and_how_to_repair(family: str) -> None:
    counts = set()
    for level in LEVELS:
        for seed in range(1, 41):
            scenario = instance(family, level, seed)
            public = scenario.public
            assert _symptom_lines(public.brief) >= 1, public.brief
            assert "Reported: ." not in public.brief
            assert not re.search(r"\b\d+ (fewer|router-to-router)", public.brief)
            rule = public.constraints[-1]
            assert rule in public.brief
            protocol = {
                "static": "static",
                "bgp": "BGP",
                "ibgp": "BGP",
                "bgp6": "BGP",
                "rip": "RIP",
                "isis": "IS-IS",
            }.get(registry.family(family).routing, "OSPF")
            assert protocol in rule, rule
            counts.add((level, sum(not f.red_herring for f in scenario.hidden.faults)))
    for level in LEVELS:
        assert len({n for lv, n in counts if lv == level}) >= 2, "fault counts vary in a level"


def test_catalogue_counts_and_json_shape() -> None:
    result = runner.invoke(app, ["scenarios", "list", "--json"])
    assert result.exit_code == 0
    families = json.loads(result.output)["families"]
    assert [f["name"] for f in families] == list(registry.families())
    assert all(set(f) == {"name", "kind", "types", "levels"} for f in families)
    assert all(f["levels"] == [1, 2, 3] for f in families)
    reactive = {t for f in families if f["kind"] == "reactive" for t in f["types"]}
    built = {
        t
        for f in registry.families().values()
        if f.kind == "reactive" and f.build is not None
        for t in f.types
    }
    assert reactive - set(registry.fault_types()) == built
    assert len({t for t in built if t.startswith("k8s.")}) == 12
    assert len(families) >= 10
    assert {f["kind"] for f in families} == {"reactive", "constructive"}


def test_constructive_constraints_name_the_protocol_to_use() -> None:
    words = {"static": "static route", "ospf": "OSPF", "bgp": "BGP", "rip": "RIP", "isis": "IS-IS"}
    for family in sorted(set(NETWORKED) - set(REACTIVE)):
        word = words[registry.family(family).routing]
        for seed in SEEDS:
            public = instance(family, 1, seed).public
            assert any(word.lower() in rule.lower() for rule in public.constraints)
            assert all(rule in public.brief for rule in public.constraints)


def test_constructive_briefs_vary() -> None:
    for family in sorted(set(NETWORKED) - set(REACTIVE)):
        briefs = {instance(family, level, seed).public.brief for level in LEVELS for seed in SEEDS}
        assert len(briefs) >= 12


def test_show_hides_the_hidden_half_unless_revealed() -> None:
    shown = runner.invoke(app, ["scenarios", "show", "host-config", "--level", "2", "--seed", "5",
                                "--json"])  # fmt: skip
    public = json.loads(shown.output)
    assert public["id"] == generate("host-config", 2, 5).id
    assert "hidden" not in public and "public" in public
    revealed = runner.invoke(app, ["scenarios", "show", "host-config", "--level", "2",
                                   "--seed", "5", "--json", "--reveal"])  # fmt: skip
    assert "hidden" in json.loads(revealed.output)


@pytest.mark.parametrize(
    ("family", "level", "seed", "message"),
    [("bgp-nope", 1, 1, "families are"), ("static-routing", 7, 1, "levels are"),
     ("static-routing", 1, -3, "seed must be")],
)  # fmt: skip
def test_bad_choices_name_the_valid_ones(family: str, level: int, seed: int, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        generate(family, level, seed)


CUTS = ("iface.admin_down", "iface.wrong_address")


def _links_of(scenario: Scenario) -> tuple[dict[str, str], dict[tuple[str, str], str]]:
    """The link of each address and of each (device, port), from the public topology."""
    by_address, by_port = {}, {}
    for device in scenario.public.devices:
        for iface in device.interfaces:
            if iface.address:
                by_address[iface.address.split("/")[0]] = iface.link
            by_port[device.name, iface.name] = iface.link
    return by_address, by_port


@pytest.mark.parametrize("family", ["static-routing", "rip-routing"])
def test_no_fault_cuts_a_link_another_faults_route_points_over(family: str) -> None:
    """A static route a fault adds is selected only while its next hop's link is up: a port
    down or readdressed on that link would leave the fault absent at staging."""
    both = 0
    for level in LEVELS:
        for seed in range(1, 41):
            scenario = instance(family, level, seed)
            by_address, by_port = _links_of(scenario)
            faults = scenario.hidden.faults
            routed = {
                by_address[f.params.get("via") or f.params.get("wrong") or ""]
                for f in faults
                if f.type.startswith("static.") and (f.params.get("via") or f.params.get("wrong"))
            }
            cut = {by_port[f.device, f.params["interface"]] for f in faults if f.type in CUTS}
            both += bool(routed and cut)
            assert not routed & cut, (level, seed, [(f.type, f.device, f.params) for f in faults])
    assert both >= 3  # instances with both kinds, so the rule was put to the test


def _removed_then_named(scenario: Scenario) -> list[str]:
    """Lines of a fault's injection that name a BGP neighbour an earlier injection on the same
    router removed: FRR refuses them, and the instance fails to stage."""
    removed: dict[str, set[str]] = {}
    found = []
    for fault in scenario.hidden.faults:
        for call in fault.inject:
            if call.tool != "configure":
                continue
            gone = removed.setdefault(call.arguments["device"], set())
            for line in call.arguments["lines"]:
                words = line.split()
                if len(words) > 1 and words[0] == "neighbor" and words[1] in gone:
                    found.append(f"{fault.type}: {line}")
                if words[:2] == ["no", "neighbor"] and len(words) == 3:
                    gone.add(words[2])
    return found


@pytest.mark.parametrize(
    ("family", "seeds"),
    [("bgp-control", [1688028791, 1380254189, *range(1, 21)]), ("bgp-peering", range(1, 21))],
)
def test_no_fault_names_a_bgp_session_another_fault_removed(
    family: str, seeds: Iterable[int]
) -> None:
    """A route-map attached to a session whose neighbour another fault removed is refused by
    FRR (the first two seeds drew exactly that before the steering faults held their session)."""
    for seed in seeds:
        for level in LEVELS:
            scenario = instance(family, level, seed)
            assert not _removed_then_named(scenario), (level, seed)
