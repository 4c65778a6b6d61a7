"""The reference solver: each query's answer and the model it leaves.

A query that only reads returns the model it was given (the same object); a change returns a
new model that shares every untouched entity and relation with the old one. Every change keeps
the invariants: a removal takes what the entity contains and every relation touching it, an
added switch comes with its ports and its control domain.
"""

from __future__ import annotations

from netdojo.scenarios.capacity.graph import Index
from netdojo.scenarios.capacity.params import (
    AddQuery,
    Answer,
    CountQuery,
    ListQuery,
    MoveQuery,
    Query,
    RankQuery,
    RemoveQuery,
    SetSpeedQuery,
    WhatIfQuery,
)
from netdojo.scenarios.capacity.schema import UNIT_BPS, Entity, PlanModel, Relation


def ranked(ix: Index, parent: str, role: str) -> list[str]:
    """The children of ``parent`` of ``role``, largest aggregate capacity first, ties by name."""
    children = [child for child in ix.children[parent] if ix.role[child] == role]
    return sorted(children, key=lambda child: (-ix.capacity(child), child))


def removable(ix: Index, name: str) -> bool:
    """Whether removing ``name`` (with what it contains) leaves a valid model: never the root
    or a control domain that controls a switch, nor a switch's last port or last linecard
    with ports."""
    role = ix.role[name]
    if role == "root":
        return False
    if role == "control_domain":
        return not any(domain == name for domain in ix.controller.values())
    if role in ("port", "linecard"):
        switch = ix.ancestor(name, ("switch",))
        assert switch is not None
        gone = {name, *ix.below(name)}
        return any(port not in gone for port in ix.ports_of(switch))
    return True


def _remove(ix: Index, query: RemoveQuery) -> PlanModel:
    gone = {query.target, *ix.below(query.target)}
    return PlanModel(
        entities=[entity for entity in ix.model.entities if entity.name not in gone],
        relations=[
            relation
            for relation in ix.model.relations
            if relation.source not in gone and relation.target not in gone
        ],
    )


def _add(ix: Index, query: AddQuery) -> PlanModel:
    schema = ix.schema
    value = schema.from_bps(query.capacity_bps)
    entities, relations = list(ix.model.entities), list(ix.model.relations)

    def add(name: str, kind: str, parent: str, attrs: dict[str, int] | None = None) -> None:
        entities.append(Entity(name=name, kind=kind, attrs=attrs or {}))
        relations.append(Relation(kind=schema.contains, source=parent, target=name))

    if query.what == "port":
        add(query.name, schema.port, query.parent, {schema.capacity_attr: value})
    else:
        add(query.name, schema.switch, query.parent)
        holder = query.name
        if query.linecard is not None:
            assert schema.linecard is not None
            add(query.linecard, schema.linecard, query.name)
            holder = query.linecard
        for port in query.ports:
            add(port, schema.port, holder, {schema.capacity_attr: value})
        assert query.controller is not None
        if query.new_controller:
            add(query.controller, schema.control_domain, ix.root)
        relations.append(Relation(kind=schema.controls, source=query.controller, target=query.name))
    return PlanModel(entities=entities, relations=relations)


def _set_speed(ix: Index, query: SetSpeedQuery) -> PlanModel:
    ports = set(ix.ports_of(query.switch))
    attr, value = ix.schema.capacity_attr, ix.schema.from_bps(query.capacity_bps)
    return PlanModel(
        entities=[
            entity.model_copy(update={"attrs": {**entity.attrs, attr: value}})
            if entity.name in ports
            else entity
            for entity in ix.model.entities
        ],
        relations=ix.model.relations,
    )


def _move(ix: Index, query: MoveQuery) -> PlanModel:
    contains, old = ix.schema.contains, ix.parent[query.switch]
    moved = Relation(kind=contains, source=query.to, target=query.switch)
    return PlanModel(
        entities=ix.model.entities,
        relations=[
            moved
            if relation.kind == contains
            and relation.target == query.switch
            and relation.source == old
            else relation
            for relation in ix.model.relations
        ],
    )


def _what_if(ix: Index, query: WhatIfQuery) -> Answer:
    lost = ix.capacity(query.target)
    if query.scenario == "drain":
        assert query.threshold_bps is not None
        home = ix.ancestor(query.target, ("superblock",))
        return sorted(
            superblock
            for superblock in ix.of_role("superblock")
            if ix.capacity(superblock) - (lost if superblock == home else 0) < query.threshold_bps
        )
    assert query.scope is not None
    return (ix.capacity(query.scope) - lost) // UNIT_BPS[query.unit]


def solve(ix: Index, query: Query) -> tuple[Answer, PlanModel]:
    """The answer to ``query`` on ``ix``'s model and the model after it."""
    model = ix.model
    if isinstance(query, ListQuery):
        return sorted(ix.children_of(query.parent, query.child_role)), model
    if isinstance(query, CountQuery):
        return sum(ix.role[name] == query.of_role for name in ix.below(query.scope)), model
    if isinstance(query, RankQuery):
        return ranked(ix, query.parent, query.child_role), model
    if isinstance(query, WhatIfQuery):
        return _what_if(ix, query), model
    if isinstance(query, AddQuery):
        return None, _add(ix, query)
    if isinstance(query, RemoveQuery):
        return None, _remove(ix, query)
    if isinstance(query, SetSpeedQuery):
        return None, _set_speed(ix, query)
    return None, _move(ix, query)
