"""Seeded topologies: connected, sized by level, identical for identical seeds in any process."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from netdojo.scenarios.topology import ROUTERS_BY_LEVEL, SHAPES, make_topology, router_count


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("n", [2, 3, 5, 12, 30])
def test_every_shape_is_connected_with_n_routers(shape: str, n: int) -> None:
    topology = make_topology(shape, n, seed=7)  # type: ignore[arg-type]
    assert len(topology.routers) == len(set(topology.routers)) == n
    assert all(a < b for a, b in topology.links)
    assert len(set(topology.links)) == len(topology.links)
    graph = topology.graph()
    assert graph.number_of_nodes() == n


def test_shapes_have_their_structure() -> None:
    ring = make_topology("ring", 6, seed=1)
    assert all(len(ring.neighbours(r)) == 2 for r in ring.routers)
    chain = make_topology("chain", 6, seed=1)
    assert sorted(len(chain.neighbours(r)) for r in chain.routers) == [1, 1, 2, 2, 2, 2]
    star = make_topology("star", 6, seed=1)
    assert max(len(star.neighbours(r)) for r in star.routers) == 5
    tree = make_topology("tree", 9, seed=1)
    assert len(tree.links) == 8


def test_seeds_change_names_and_order_but_not_the_answer() -> None:
    first = make_topology("random", 10, seed=3)
    assert first == make_topology("random", 10, seed=3)
    variants = {json.dumps(make_topology("ring", 5, seed=s).model_dump()) for s in range(20)}
    assert len(variants) > 10


def test_same_topology_in_another_process() -> None:
    code = (
        "import json; from netdojo.scenarios.topology import make_topology; "
        "print(json.dumps(make_topology('leaf-spine', 9, 42).model_dump()))"
    )
    other = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env={"PYTHONHASHSEED": "123"},
    )  # fmt: skip
    assert json.loads(other.stdout) == json.loads(
        json.dumps(make_topology("leaf-spine", 9, 42).model_dump())
    )


def test_router_count_follows_the_level() -> None:
    rng = random.Random(0)
    for level, (low, high) in ROUTERS_BY_LEVEL.items():
        counts = {router_count(level, rng) for _ in range(200)}
        assert min(counts) >= low and max(counts) <= high
    with pytest.raises(ValueError, match="levels are"):
        router_count(4, rng)


def test_unknown_shape_names_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="chain"):
        make_topology("mesh", 4, seed=1)  # type: ignore[arg-type]
