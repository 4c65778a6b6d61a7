"""What a user or a monitoring system can observe of a network's faults, as plain facts.

An `Observation` is true on the live lab while the faults are active: a host pair that cannot
ping, a host cut off from every other, a flow that arrives along a longer path than the
design's, router links that carry no routing, a flow that a firewall policy should let
through and does not (or the other way round). Many fault types and places give the same
observation, so a brief made of them says what is wrong, never why.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Literal
from weakref import WeakKeyDictionary

from netdojo.scenarios.forwarding import Course, Forwarding, Impact

ObservationKind = Literal[
    "broken",
    "isolated",
    "detour",
    "quiet",
    "blocked",
    "open",
    "stalled",
    "slow",
    "lossy",
    "unresolved",
]


@dataclass(frozen=True, order=True)
class Observation:
    """``hosts``: the pair (broken, sorted; detour, from and to), the host (isolated), or the
    client and the server (blocked, open, with ``port``), the sender and the receiver (stalled,
    slow, lossy), the client and the host whose name it looks up (unresolved); ``lost`` on
    quiet: some adjacency or session is down, not only idle; ``figure``: the tolerance a
    measured flow must meet (slow: Mbit/s; lossy: percent)."""

    kind: ObservationKind
    hosts: tuple[str, ...] = ()
    port: int = 0
    lost: bool = False
    figure: float = 0.0


@dataclass(frozen=True)
class Outlook:
    """What the model predicts under an impact: observations, and whether it is sure of all."""

    observations: frozenset[Observation]
    sure: bool
    detours: dict[tuple[str, str], tuple[str, ...]]  # flow -> the design's path it left


def designed_paths(model: Forwarding) -> dict[tuple[str, str], tuple[str, ...]]:
    """The flows whose path the design fixes: one way only, at baseline."""
    return {
        pair: next(iter(course.paths))
        for pair, course in model.courses(Impact()).items()
        if course.arrives and len(course.paths) == 1
    }


Designed = dict[tuple[str, str], tuple[str, ...]]
_outlooks: WeakKeyDictionary[Forwarding, dict[Hashable, Outlook]] = WeakKeyDictionary()
"""Each model's outlooks by impact and designed paths: faults are weighed alone and together
over and over while an instance is drawn."""


def outlook(model: Forwarding, impact: Impact, designed: Designed) -> Outlook:
    """What ``model`` predicts under ``impact``, the flows in ``designed`` taking their path."""
    known = _outlooks.setdefault(model, {})
    key = (impact.key(), frozenset(designed.items()))
    if key not in known:
        known[key] = _outlook(model, impact, designed)
    seen = known[key]
    return Outlook(seen.observations, seen.sure, dict(seen.detours))


def _outlook(model: Forwarding, impact: Impact, designed: Designed) -> Outlook:
    found_courses = model.courses(impact)
    states = model.ping_states(impact, found_courses)
    found: set[Observation] = set()
    hosts = model.hosts
    for a, b in itertools.combinations(hosts, 2):
        if states[a, b] == "broken":
            found.add(Observation("broken", (a, b)))
    if len(hosts) > 2:
        for host in hosts:
            if all(states[host, other] == "broken" for other in hosts if other != host):
                found.add(Observation("isolated", (host,)))
    detours = {}
    for pair, course in found_courses.items():
        if pair in designed and _longer(course, designed[pair]) and states[pair] == "works":
            found.add(Observation("detour", pair))
            detours[pair] = designed[pair]
    if model.routing != "static" and (impact.down_links & model.transit or impact.down_sessions):
        lost = bool((impact.down_links & model.transit) - impact.idle_links or impact.down_sessions)
        found.add(Observation("quiet", lost=lost))
    sure = "unsure" not in states.values()
    return Outlook(frozenset(found), sure, detours)


def _longer(course: Course, designed: tuple[str, ...]) -> bool:
    return course.arrives and all(len(path) > len(designed) for path in course.paths)
