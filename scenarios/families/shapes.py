"""The topologies families draw from, by level."""

from __future__ import annotations

from netdojo.scenarios.topology import Shape

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
SURE_PATHS: dict[int, tuple[Shape, ...]] = {
    1: ("chain", "tree", "star"),
    2: ("tree", "ring", "random"),
    3: ("tree", "ring"),
}
"""Shapes whose flows the forwarding model follows to the end at every level (large random
and leaf-spine networks have more equal-cost ways than it follows)."""
RIP: dict[int, tuple[Shape, ...]] = {  # no rings of 15 or more: RIP counts 16 hops as unreachable
    1: ("chain", "tree", "star", "ring"),
    2: ("tree", "ring", "random", "leaf-spine"),
    3: ("random", "leaf-spine", "tree"),
}
