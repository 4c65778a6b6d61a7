"""Least costs over plain tables of steps, for the forwarding models of the routings."""

from __future__ import annotations

import heapq
from collections.abc import Mapping


def least_costs(
    arriving: Mapping[str, Mapping[str, int]], origin: str, cutoff: int | None = None
) -> dict[str, int]:
    """The cost of the cheapest way to ``origin`` from each router that has one (of at most
    ``cutoff``, when given); ``arriving[b][a]`` is the cost of the step from a to b."""
    found: dict[str, int] = {}
    frontier = [(0, origin)]
    while frontier:
        cost, router = heapq.heappop(frontier)
        if router in found:
            continue
        found[router] = cost
        for previous, step in arriving[router].items():
            if previous not in found and (cutoff is None or cost + step <= cutoff):
                heapq.heappush(frontier, (cost + step, previous))
    return found
