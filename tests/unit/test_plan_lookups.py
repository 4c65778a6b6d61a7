"""What generation remembers to be fast stays right: a network's node index under any change
to its nodes, impacts told apart by content, the forwarding model's courses per impact, and
the searches that replaced general graph algorithms give what those give."""

from __future__ import annotations

import itertools
import random

import networkx as nx
import pytest

from netdojo.scenarios.faults.base import sole_shortest_paths
from netdojo.scenarios.forwarding import Forwarding, Impact
from netdojo.scenarios.generate import plan_instance
from netdojo.scenarios.network import Network, Node, plan_network
from netdojo.scenarios.rip_plan import hop_span
from netdojo.scenarios.symptoms import designed_paths, outlook
from netdojo.scenarios.topology import SHAPES, Shape, make_topology


def _network(seed: int = 3) -> Network:
    return plan_network(make_topology("ring", 5, seed), 2, random.Random(seed))


def test_a_node_is_found_by_name_however_the_nodes_change() -> None:
    network = _network()
    first = network.nodes[0]
    assert network.node(first.name) is first
    extra = Node(name="spare", role="router", ifaces=[])
    network.nodes.append(extra)
    assert network.node("spare") is extra
    replacement = first.model_copy()
    network.nodes[0] = replacement
    assert network.node(first.name) is replacement
    network.nodes.reverse()
    assert all(network.node(n.name) is n for n in network.nodes)
    network.nodes[1].name = "renamed"
    assert network.node("renamed") is network.nodes[1]
    del network.nodes[0]
    assert all(network.node(n.name) is n for n in network.nodes)
    with pytest.raises(KeyError):
        network.node("nowhere")


def test_of_two_nodes_with_one_name_the_first_is_found() -> None:
    network = _network()
    twin = network.nodes[0].model_copy(update={"ifaces": []})
    network.nodes.append(twin)
    assert network.node(twin.name) is network.nodes[0]
    del network.nodes[0]
    assert network.node(twin.name) is twin


def test_a_copy_with_other_nodes_finds_its_own() -> None:
    network = _network()
    network.node(network.nodes[0].name)  # the original's index is built
    nodes = [node.model_copy(update={"asn": 1}) for node in reversed(network.nodes)]
    copy = network.model_copy(update={"nodes": nodes})
    assert all(copy.node(n.name) is n for n in nodes)
    assert all(network.node(n.name) is n for n in network.nodes)


def test_merged_impacts_join_their_entries_and_leave_both_as_they_were() -> None:
    one = Impact(drops={"r1": {"h1"}}, costs={"r1": {"r2": 10}}, isolated={"h3"})
    two = Impact(drops={"r1": {"h2"}, "r2": {"h1"}}, costs={"r1": {"r3": 5}})
    merged = one.merge(two)
    assert merged == Impact(
        drops={"r1": {"h1", "h2"}, "r2": {"h1"}},
        costs={"r1": {"r2": 10, "r3": 5}},
        isolated={"h3"},
    )
    merged.drops["r1"].add("h9")
    merged.costs["r1"]["r2"] = 1
    assert one == Impact(drops={"r1": {"h1"}}, costs={"r1": {"r2": 10}}, isolated={"h3"})
    assert two.drops == {"r1": {"h2"}, "r2": {"h1"}}


def test_equal_impacts_have_one_key_and_different_ones_another() -> None:
    a = Impact(down_links={frozenset(("r1", "r2")), frozenset(("r2", "r3"))})
    b = Impact(down_links={frozenset(("r2", "r3")), frozenset(("r2", "r1"))})
    assert a.key() == b.key()
    assert a.key() != Impact(down_links={frozenset(("r1", "r2"))}).key()
    assert Impact(silenced={("r1", "r2")}).key() != Impact(silenced={("r2", "r1")}).key()
    assert Impact().key() != Impact(isolated={"h1"}).key()


@pytest.mark.parametrize("routing", ["ospf", "rip", "bgp", "static"])
def test_courses_follow_an_impact_changed_after_it_was_asked_about(routing: str) -> None:
    network = _network()
    model = Forwarding(network, routing)
    a, b = network.transit_links()[0]
    impact = Impact()
    before = model.courses(impact)
    impact.down_links.add(frozenset((a, b)))
    after = model.courses(impact)
    assert after == Forwarding(network, routing).courses(Impact(down_links={frozenset((a, b))}))
    assert before == Forwarding(network, routing).courses(Impact())
    after.clear()
    assert model.courses(impact), "a caller's changes to its copy reach no one else"


def test_an_outlook_hands_out_its_own_detours() -> None:
    network, _ = plan_instance("ospf-routing", 2, 3)
    model = Forwarding(network, "ospf")
    designed = designed_paths(model)
    a, b = network.transit_links()[0]
    impact = Impact(costs={a: {b: 100}})
    first = outlook(model, impact, designed)
    first.detours.clear()
    assert outlook(model, impact, designed) == outlook(
        Forwarding(network, "ospf"), impact, designed
    )


def _hop_span_by_diameters(graph: nx.Graph) -> int:
    worst = 0
    for edge in [None, *graph.edges]:
        cut = graph.copy()
        if edge is not None:
            cut.remove_edge(*edge)
        for part in nx.connected_components(cut):
            worst = max(worst, nx.diameter(cut.subgraph(part)))
    return worst


@pytest.mark.parametrize("shape", SHAPES)
def test_the_hop_span_is_the_largest_diameter_with_any_one_link_lost(shape: Shape) -> None:
    for size, seed in itertools.product((2, 4, 9, 16), (1, 2)):
        topology = make_topology(shape, size, seed)
        assert hop_span(topology) == _hop_span_by_diameters(topology.graph())


def test_sole_shortest_paths_are_the_shortest_paths_that_have_no_rival() -> None:
    for shape, seed in itertools.product(SHAPES, range(1, 4)):
        graph = make_topology(shape, 12, seed).graph()
        for target in graph:
            sole = sole_shortest_paths(graph.adj, target)
            for source in graph:
                paths = list(nx.all_shortest_paths(graph, source, target))
                assert sole.get(source) == (paths[0] if len(paths) == 1 else None)
