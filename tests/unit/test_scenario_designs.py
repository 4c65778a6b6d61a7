"""The designs behind the newer families: area plans, the iBGP forwarding model, intents."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections.abc import Iterator

import networkx as nx
import pytest

from netdojo.scenarios.forwarding import Impact, reachable_pairs
from netdojo.scenarios.generate import generate, plan_instance
from netdojo.scenarios.hidden_tests import BgpRouteTest, PathTest, RouteTest
from netdojo.scenarios.model import Scenario
from netdojo.scenarios.network import Network
from netdojo.scenarios.path_intent import OFF_PATH_COST
from netdojo.scenarios.registry import LEVELS

SEEDS = range(1, 13)


def _network_of(family: str, level: int, seed: int) -> Network:
    return plan_instance(family, level, seed)[0]


def _designs(family: str, level: int) -> Iterator[tuple[Scenario, Network]]:
    """Each sampled seed's scenario with the network it was planned on."""
    for seed in SEEDS:
        yield generate(family, level, seed), _network_of(family, level, seed)


@pytest.mark.parametrize(
    "family", ["ospf-multiarea", "bgp-ibgp", "bgp-transit-build", "bgp-exit-build"]
)
def test_new_families_are_identical_in_another_process(family: str) -> None:
    code = (
        "from netdojo.scenarios.generate import generate; "
        f"print(generate({family!r}, 2, 5).model_dump_json())"
    )
    other = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env={"PYTHONHASHSEED": "7"},
    )  # fmt: skip
    assert other.stdout.strip() == generate(family, 2, 5).model_dump_json()
    assert json.loads(other.stdout)["id"] == generate(family, 2, 5).id


@pytest.mark.parametrize("level", LEVELS)
def test_every_area_is_a_subtree_hanging_off_the_backbone(level: int) -> None:
    for seed in SEEDS:
        network = _network_of("ospf-multiarea", level, seed)
        graph = network.router_graph()
        areas: dict[int, set[str]] = {}
        for a, b in graph.edges:
            link = network.node(a).iface_to(b).link
            areas.setdefault(network.ospf_areas.get(link, 0), set()).update((a, b))
        backbone = areas.pop(0)
        assert areas, "a multi-area plan has areas besides the backbone"
        for routers in areas.values():
            assert nx.is_connected(graph.subgraph(routers))
            assert len(routers & backbone) == 1  # exactly one border router
        assert network.redistributed


def test_ibgp_model_follows_next_hops_and_sessions() -> None:
    network = _network_of("bgp-ibgp", 1, 1)
    everyone = set(itertools.permutations(sorted(network.lans), 2))
    assert reachable_pairs(network, "ibgp", Impact()) == everyone
    external = network.externals[0]
    border = network.node(external).ifaces[0].peer
    behind = {h for h in network.lans if network.router_of(h) == external}
    broken = everyone - reachable_pairs(network, "ibgp", Impact(no_next_hop_self={border}))
    inside_border = {h for h in network.lans if network.router_of(h) == border}
    assert broken and all((set(pair) & behind) for pair in broken)
    assert not any(set(pair) <= behind | inside_border for pair in broken)
    hosted = sorted({network.router_of(h) for h in network.lans} - set(network.externals))
    a, b = hosted[:2]
    cut = Impact(down_sessions={frozenset((a, b))})
    pair = next(
        (x, y) for x, y in everyone if network.router_of(x) == a and network.router_of(y) == b
    )
    assert pair not in reachable_pairs(network, "ibgp", cut)


@pytest.mark.parametrize("level", LEVELS)
def test_the_path_intent_is_a_real_choice_the_reference_enforces(level: int) -> None:
    for scenario, network in _designs("ospf-path-build", level):
        graph = network.router_graph()
        routers = next(t.params.routers for t in scenario.hidden.targets if isinstance(t, PathTest))
        shortest = list(nx.all_shortest_paths(graph, routers[0], routers[-1]))
        assert shortest != [routers]  # plain OSPF would not pick it alone
        on_path = {frozenset(pair) for pair in itertools.pairwise(routers)}
        for a, b in graph.edges:
            graph.edges[a, b]["cost"] = 1 if frozenset((a, b)) in on_path else OFF_PATH_COST
        cheapest = list(nx.all_shortest_paths(graph, routers[0], routers[-1], weight="cost"))
        assert cheapest == [routers]
        assert scenario.public.brief.count(" -> ") or ", ".join(routers) in scenario.public.brief


@pytest.mark.parametrize("level", LEVELS)
def test_the_no_transit_router_is_not_a_cut_router(level: int) -> None:
    for scenario, network in _designs("bgp-transit-build", level):
        assert any(isinstance(t, BgpRouteTest) for t in scenario.hidden.targets)
        stub = scenario.hidden.solution[-1].arguments["device"]
        rest = network.router_graph()
        rest.remove_node(stub)
        assert nx.is_connected(rest)
        assert stub in scenario.public.brief


@pytest.mark.parametrize("level", LEVELS)
def test_the_preferred_exit_is_not_plain_bgps_choice(level: int) -> None:
    for scenario, network in _designs("bgp-exit-build", level):
        graph = network.router_graph()
        exit_test = next(t for t in scenario.hidden.targets if t.id.startswith("target:exit:"))
        assert isinstance(exit_test, RouteTest)
        source, params = exit_test.device, exit_test.params
        prefix, via = params.prefix, params.via
        assert params.sole
        addresses = {r: network.node(r).iface_to(source).address for r in graph.neighbors(source)}
        preferred = next(r for r, address in addresses.items() if address.split("/")[0] == via)
        host = next(h for h, lan in network.lans.items() if lan == prefix)
        target = network.router_of(host)
        shortest = list(nx.all_shortest_paths(graph, source, target))
        assert len(shortest) == 1 and shortest[0][1] != preferred  # plain BGP picks another
        for onward in nx.all_shortest_paths(graph, preferred, target):
            assert source not in onward  # the preferred neighbour offers its path to the source
        policy = scenario.hidden.solution[-1].arguments
        assert policy["device"] == source
        assert any(line.endswith(" in") and via in line for line in policy["lines"])
        assert any("local-preference" in line for line in policy["lines"])
        plain = [line for call in scenario.hidden.solution[:-1] for line in call.arguments["lines"]]
        assert not any("route-map" in line for line in plain)
        traces = [t for t in scenario.hidden.targets if isinstance(t, PathTest)]
        assert all(t.params.routers[:2] == [source, preferred] for t in traces)
        brief = scenario.public.brief
        assert source in brief and preferred in brief
        assert prefix in brief or host in brief
        assert "local-preference" not in brief and "route-map" not in brief
