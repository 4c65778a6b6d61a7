"""Seeded router topologies: chain, ring, star, tree, leaf-spine and random connected graphs.

Pure functions of (shape, size, seed): the same arguments give the same graph, node names and
edge order in any process, because all randomness comes from one `random.Random(seed)` and
every iteration is over sorted data.
"""

from __future__ import annotations

import random
from typing import Literal

import networkx as nx
from pydantic import BaseModel, ConfigDict

Shape = Literal["chain", "ring", "star", "tree", "leaf-spine", "random"]
SHAPES: tuple[Shape, ...] = ("chain", "ring", "star", "tree", "leaf-spine", "random")
ROUTERS_BY_LEVEL: dict[int, tuple[int, int]] = {1: (3, 5), 2: (6, 12), 3: (15, 30)}
NAME_PREFIXES = ("r", "rtr", "core", "edge", "gw", "br")


class Topology(BaseModel):
    """Routers and the point-to-point links between them, in a seeded order."""

    model_config = ConfigDict(frozen=True)

    shape: Shape
    routers: list[str]
    links: list[tuple[str, str]]

    def graph(self) -> nx.Graph:
        graph = nx.Graph()
        graph.add_nodes_from(self.routers)
        graph.add_edges_from(self.links)
        return graph

    def neighbours(self, router: str) -> list[str]:
        return sorted(b if a == router else a for a, b in self.links if router in (a, b))


def router_count(level: int, rng: random.Random) -> int:
    if level not in ROUTERS_BY_LEVEL:
        raise ValueError(f"unknown level {level}; levels are {sorted(ROUTERS_BY_LEVEL)}")
    low, high = ROUTERS_BY_LEVEL[level]
    return rng.randint(low, high)


def _edges(shape: Shape, n: int, rng: random.Random) -> list[tuple[int, int]]:
    if shape == "chain":
        return [(i, i + 1) for i in range(n - 1)]
    if shape == "ring":
        return [(i, (i + 1) % n) for i in range(n)] if n > 2 else [(0, 1)]
    if shape == "star":
        return [(0, i) for i in range(1, n)]
    if shape == "tree":
        return [(rng.randrange(i), i) for i in range(1, n)]
    if shape == "leaf-spine":
        spines = 1 if n < 4 else max(2, n // 4)
        return [(s, leaf) for s in range(spines) for leaf in range(spines, n)]
    # random connected: a random spanning tree plus a few chords
    edges = {(rng.randrange(i), i) for i in range(1, n)}
    for _ in range(rng.randint(1, max(1, n // 3))):
        a, b = sorted(rng.sample(range(n), 2))
        edges.add((a, b))
    return sorted(edges)


def make_topology(shape: Shape, n: int, seed: int) -> Topology:
    """A connected topology of ``n`` routers with seeded names and link order."""
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; shapes are {', '.join(SHAPES)}")
    if n < 2:
        raise ValueError("a topology needs at least 2 routers")
    rng = random.Random(f"topology:{shape}:{n}:{seed}")
    prefix = rng.choice(NAME_PREFIXES)
    numbers = rng.sample(range(1, 10 * n), n)
    names = [f"{prefix}{number}" for number in numbers]
    pairs = {(min(names[a], names[b]), max(names[a], names[b])) for a, b in _edges(shape, n, rng)}
    links = sorted(pairs)
    rng.shuffle(links)
    topology = Topology(shape=shape, routers=sorted(names), links=links)
    if not _connected(topology):
        raise AssertionError(f"{shape} topology of {n} routers is not connected")
    return topology


def _connected(topology: Topology) -> bool:
    neighbours: dict[str, list[str]] = {router: [] for router in topology.routers}
    for a, b in topology.links:
        neighbours[a].append(b)
        neighbours[b].append(a)
    start = topology.routers[0]
    seen, frontier = {start}, [start]
    while frontier:
        for n in neighbours[frontier.pop()]:
            if n not in seen:
                seen.add(n)
                frontier.append(n)
    return len(seen) == len(topology.routers)
