"""Drawing one query about a given entity, or ``None`` when the entity does not suit the kind.

Every drawn query is well posed on the model it is drawn on: a list or rank has children to
name, a removal keeps the invariants, a move has somewhere to go, a speed change changes a
port, a what-if threshold sits where the drained block decides the answer.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from netdojo.scenarios.capacity.generate import GBPS, SIZES, Generated
from netdojo.scenarios.capacity.graph import Index
from netdojo.scenarios.capacity.ops import removable
from netdojo.scenarios.capacity.params import (
    AddQuery,
    CountQuery,
    ListQuery,
    MoveQuery,
    Query,
    QueryKind,
    RankQuery,
    RemoveQuery,
    SetSpeedQuery,
    WhatIfQuery,
)
from netdojo.scenarios.capacity.schema import BLOCK_ROLES, ROLES, Role, Unit

MAX_LISTED = 40
MAX_RANKED = 24
NEW_SWITCH_PORTS = {1: (2, 4, 6), 2: (4, 8, 12), 3: (4, 8, 16)}
ANSWER_UNITS: tuple[Unit, ...] = ("Gbps", "Gbps", "Mbps", "bps")

CONTAINERS: tuple[Role, ...] = tuple(r for r in ROLES if r not in ("port", "control_domain"))
ABOUT: dict[QueryKind, tuple[Role, ...]] = {
    "list": CONTAINERS,
    "count": CONTAINERS[:-1],
    "rank": CONTAINERS,
    "add": ("agg_block", "spine_block", "rack", "switch", "linecard"),
    "remove": ("superblock", "agg_block", "spine_block", "rack", "switch", "linecard", "port"),
    "set_speed": ("switch",),
    "move": ("switch",),
    "what_if": ("agg_block", "spine_block", "switch"),
}
"""The roles a first query of each kind may be about."""


@dataclass(frozen=True)
class Draw:
    """What drawing a query needs: the model's index, the instance, the level, the seed's rng."""

    ix: Index
    generated: Generated
    level: int
    rng: random.Random

    @property
    def speeds(self) -> tuple[int, ...]:
        return SIZES[self.level].speeds


def draw_list(d: Draw, name: str) -> Query | None:
    ix = d.ix
    options = [
        role
        for role in ix.schema.child_roles(ix.role[name])
        if 1 <= len(ix.children_of(name, role)) <= MAX_LISTED
    ]
    return ListQuery(parent=name, child_role=d.rng.choice(options)) if options else None


def draw_count(d: Draw, name: str) -> Query | None:
    roles = d.ix.schema.roles
    present = sorted({d.ix.role[child] for child in d.ix.below(name)}, key=roles.index)
    return CountQuery(scope=name, of_role=d.rng.choice(present)) if present else None


def draw_rank(d: Draw, name: str) -> Query | None:
    ix = d.ix
    options = [
        role
        for role in ix.schema.child_roles(ix.role[name])
        if role != "control_domain" and 2 <= len(ix.children_of(name, role)) <= MAX_RANKED
    ]
    return RankQuery(parent=name, child_role=d.rng.choice(options)) if options else None


def draw_remove(d: Draw, name: str) -> Query | None:
    return RemoveQuery(target=name) if removable(d.ix, name) else None


def draw_set_speed(d: Draw, name: str) -> Query | None:
    ix = d.ix
    if ix.role[name] != "switch":
        return None
    have = {ix.capacity(port) for port in ix.ports_of(name)}
    options = [speed for speed in d.speeds if have != {speed * GBPS}]
    return SetSpeedQuery(switch=name, capacity_bps=d.rng.choice(options) * GBPS)


def draw_move(d: Draw, name: str) -> Query | None:
    ix = d.ix
    if ix.role[name] != "switch":
        return None
    here = ix.parent[name]
    others = [holder for holder in ix.of_role(ix.role[here]) if holder != here]
    return MoveQuery(switch=name, to=d.rng.choice(others)) if others else None


def draw_what_if(d: Draw, name: str) -> Query | None:
    ix, rng = d.ix, d.rng
    role = ix.role[name]
    if role in BLOCK_ROLES:
        superblock = ix.ancestor(name, ("superblock",))
        assert superblock is not None
        high = ix.capacity(superblock)
        low = high - ix.capacity(name)
        step = 10 * GBPS
        choices = range(low // step + 1, high // step + 1)
        if not choices:
            return None
        return WhatIfQuery(scenario="drain", target=name, threshold_bps=rng.choice(choices) * step)
    if role == "switch":
        scopes = ("agg_block", "spine_block") if rng.random() < 0.6 else ("superblock",)
        scope = ix.ancestor(name, scopes)
        unit = rng.choice(ANSWER_UNITS)
        return WhatIfQuery(scenario="fail", target=name, scope=scope, unit=unit)
    return None


def draw_add(d: Draw, name: str, ports: int | None = None) -> Query | None:
    """A new switch in ``name`` (with ``ports`` ports, or a drawn number), or a new port in a
    switch or linecard (when ``ports`` is not given)."""
    ix, rng, naming = d.ix, d.rng, d.generated.naming
    schema = ix.schema
    holds = schema.child_roles(ix.role[name])
    speed = rng.choice(d.speeds) * GBPS
    if "port" in holds and ports is None:
        port = naming.fresh("port", name, ix.entity)
        return AddQuery(what="port", name=port, parent=name, capacity_bps=speed)
    if "switch" not in holds:
        return None
    switch = naming.fresh("switch", name, ix.entity)
    linecard = naming.name("linecard", switch, naming.start) if schema.linecard else None
    holder = linecard or switch
    count = ports if ports is not None else rng.choice(NEW_SWITCH_PORTS[d.level])
    names = tuple(naming.name("port", holder, naming.start + k) for k in range(count))
    siblings = [ix.controller[s] for s in ix.children_of(name, "switch") if s in ix.controller]
    new_controller = rng.random() < 0.35
    if new_controller:
        controller = naming.fresh("control_domain", ix.root, ix.entity)
    else:
        controller = rng.choice(siblings or ix.of_role("control_domain"))
    assert not {switch, holder, *names} & ix.entity.keys()
    return AddQuery(
        what="switch",
        name=switch,
        parent=name,
        capacity_bps=speed,
        ports=names,
        linecard=linecard,
        controller=controller,
        new_controller=new_controller,
    )


DRAWERS: dict[QueryKind, Callable[[Draw, str], Query | None]] = {
    "list": draw_list,
    "count": draw_count,
    "rank": draw_rank,
    "add": draw_add,
    "remove": draw_remove,
    "set_speed": draw_set_speed,
    "move": draw_move,
    "what_if": draw_what_if,
}


def draw_about(d: Draw, kind: QueryKind, name: str) -> Query | None:
    """A query of ``kind`` about ``name``, or ``None`` if ``name`` does not suit it."""
    return DRAWERS[kind](d, name)


def draw_anywhere(d: Draw, kind: QueryKind, tries: int = 12) -> Query | None:
    """A query of ``kind`` about an entity of a role drawn from those it may be about."""
    roles = [role for role in ABOUT[kind] if d.ix.of_role(role)]
    for _ in range(tries):
        query = DRAWERS[kind](d, d.rng.choice(d.ix.of_role(d.rng.choice(roles))))
        if query is not None:
            return query
    return None
