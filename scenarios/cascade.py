"""Cascades at level 3: two faults where one masks the other.

A cascade is a pair (masking, masked) of faults on devices at least two hops apart, where
everything the masked fault shows on its own (the host pairs it breaks, the flows it spoils)
is shown by the masking one as well, so while both are present nothing in the network points
at the masked fault; once the masking fault is repaired, every symptom of the masked one is
there to see. About one level-3 instance of a reactive family drawn on a routed network in
every three is a cascade, decided from the seed.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import networkx as nx

from netdojo.scenarios.faults.base import FaultContext, FaultPlan
from netdojo.scenarios.forwarding import Forwarding, Impact
from netdojo.scenarios.model import Cascade
from netdojo.scenarios.network import Network
from netdojo.scenarios.symptoms import Observation, designed_paths, outlook

LEVEL = 3
SHARE = 3
"""One level-3 instance in this many is drawn as a cascade."""
MIN_HOPS = 2
"""The masked fault's device is at least this many links from the masking one's."""

Offers = dict[tuple[str, str], tuple[FaultPlan, set[str]]]
Designed = dict[tuple[str, str], tuple[str, ...]]


def is_cascade(family: str, level: int, seed: int) -> bool:
    """Whether instance (``family``, ``level``, ``seed``) is drawn as a cascade."""
    if level != LEVEL:
        return False
    drawn = hashlib.sha256(f"cascade/{family}/{level}/{seed}".encode()).digest()
    return int.from_bytes(drawn[:8], "big") % SHARE == 0


@dataclass(frozen=True)
class Pair:
    """A drawn cascade: the two plans and the keys they take."""

    masking: FaultPlan
    masked: FaultPlan
    taken: set[str]


def hops_apart(network: Network) -> Callable[[str, str], int]:
    """The number of links between two devices (routers or hosts)."""
    graph = nx.Graph()
    for _, ends in network.links:
        for (a, _), (b, _) in itertools.combinations(ends, 2):
            graph.add_edge(a, b)
    lengths = dict(nx.all_pairs_shortest_path_length(graph))
    return lambda a, b: lengths[a].get(b, len(graph))


@dataclass(frozen=True)
class Observed:
    observations: frozenset[Observation]
    sure: bool


def symptoms(model: Forwarding, plans: Sequence[FaultPlan], designed: Designed) -> Observed:
    """What ``plans`` together show, and whether the model is sure of it."""
    impact = Impact()
    for plan in plans:
        impact = impact.merge(plan.impact)
    seen = outlook(model, impact, designed)
    flows = frozenset[Observation]().union(*(plan.flows for plan in plans))
    return Observed(seen.observations | flows, seen.sure)


def holds(
    model: Forwarding, plans: Sequence[FaultPlan], masking: int, masked: int, designed: Designed
) -> bool:
    """Whether, among ``plans``, the one at ``masked`` shows nothing the others do not show
    while the one at ``masking`` is present, and shows all it shows alone once it is gone."""
    own = symptoms(model, [plans[masked]], designed)
    if not own.sure or all(seen.kind == "quiet" for seen in own.observations):
        return False
    every = symptoms(model, plans, designed)
    without = symptoms(model, [p for i, p in enumerate(plans) if i != masked], designed)
    repaired = symptoms(model, [p for i, p in enumerate(plans) if i != masking], designed)
    return (
        every.sure
        and repaired.sure
        and every.observations == without.observations
        and own.observations <= repaired.observations
    )


def draw_pair(ctx: FaultContext, model: Forwarding, offers: Offers) -> Pair | None:
    """A masking and a masked fault among ``offers``, both drawn evenly; None when this
    network offers no such pair."""
    designed = designed_paths(model)
    apart = hops_apart(ctx.network)
    keys = sorted(offers)

    @cache
    def own(key: tuple[str, str]) -> Observed:
        """What the offer at ``key`` shows alone (worked out only when asked)."""
        return symptoms(model, [offers[key][0]], designed)

    for first in ctx.rng.sample(keys, len(keys)):
        masking, taken = offers[first]
        if not own(first).sure:
            continue
        seconds = [
            key
            for key in keys
            if apart(first[1], key[1]) >= MIN_HOPS
            and not offers[key][1] & taken
            and own(key).observations <= own(first).observations
        ]
        for second in ctx.rng.sample(seconds, len(seconds)):
            masked, also = offers[second]
            if holds(model, [masking, masked], 0, 1, designed):
                return Pair(masking, masked, taken | also)
    return None


def record(plans: Sequence[FaultPlan], model: Forwarding) -> Cascade:
    """The hidden record of the cascade among the real faults ``plans``, whose masking plan is
    first and masked plan second: the pairs the masked fault breaks, which still fail once the
    masking fault is repaired, and the pairs that then work again."""
    every = _broken(model, plans)
    repaired = _broken(model, plans[1:])
    return Cascade(
        masking=0,
        masked=1,
        pairs=sorted(_broken(model, plans[1:2])),
        revived=sorted(every - repaired),
    )


def _broken(model: Forwarding, plans: Sequence[FaultPlan]) -> set[tuple[str, str]]:
    impact = Impact()
    for plan in plans:
        impact = impact.merge(plan.impact)
    states = model.ping_states(impact)
    return {(a, b) for a, b in itertools.combinations(model.hosts, 2) if states[a, b] == "broken"}
