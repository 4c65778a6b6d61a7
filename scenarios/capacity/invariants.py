"""The one check of a model's invariants (`schema.INVARIANTS`), in one pass over the model.

The generator asserts it on every model it makes, the reference solver on every model a query
leaves, and a judge on the model an agent writes back.
"""

from __future__ import annotations

import math
from collections import defaultdict

from netdojo.scenarios.capacity.schema import INVARIANTS, PlanModel, Schema

NUMBERS = (int, float)
"""A capacity's types (exactly: a boolean is not a number here)."""
SHOWN = 5
"""How many offending names a violation line quotes."""

WHAT = {
    "unique-names": "names are used more than once",
    "known-kinds": "entities have a kind the schema does not list",
    "known-relations": "relations have a kind the schema does not list",
    "relation-endpoints": "relations name an entity the model does not have",
    "hierarchy": "relations join kinds the schema does not allow",
    "one-root": "root entities where exactly one is needed",
    "one-container": "entities are not contained exactly as the hierarchy requires",
    "no-isolated": "entities take part in no relation",
    "port-capacity": "ports lack a positive capacity",
    "switch-has-port": "packet switches contain no port",
    "one-controller": "packet switches are not controlled by exactly one control domain",
}
assert set(WHAT) == {name for name, _ in INVARIANTS}


def _line(name: str, items: list[str]) -> str:
    shown = ", ".join(items[:SHOWN]) + (", ..." if len(items) > SHOWN else "")
    return f"{name}: {len(items)} {WHAT[name]}: {shown}"


def broken_invariants(model: PlanModel, schema: Schema) -> list[str]:
    """One line per broken invariant (its name, how many, the first few offenders), in the
    order `INVARIANTS` lists them; empty when the model is valid."""
    found: dict[str, list[str]] = defaultdict(list)
    role_of = schema.role_map
    kinds: dict[str, str] = {}
    for entity in model.entities:
        if entity.name in kinds:
            found["unique-names"].append(entity.name)
        kinds[entity.name] = entity.kind
        if entity.kind not in role_of:
            found["known-kinds"].append(f"{entity.name} ({entity.kind})")
    allowed = schema.contains_pairs
    port, linecard, switch = schema.port, schema.linecard, schema.switch
    contains, controls, domain = schema.contains, schema.controls, schema.control_domain
    relations = model.relations
    touched = {relation.source for relation in relations}
    touched.update(relation.target for relation in relations)
    containers: dict[str, int] = {}
    controllers: dict[str, int] = {}
    holds_port: set[str] = set()
    linecards: dict[str, list[str]] = defaultdict(list)
    for relation in relations:
        kind, source, target = relation.kind, relation.source, relation.target
        if kind != contains and kind != controls:
            found["known-relations"].append(f"{source} -> {target} ({kind})")
            continue
        source_kind, target_kind = kinds.get(source), kinds.get(target)
        if source_kind is None or target_kind is None:
            found["relation-endpoints"].append(f"{source} -> {target} ({kind})")
            continue
        if kind == contains:
            containers[target] = containers.get(target, 0) + 1
            if (source_kind, target_kind) not in allowed:
                found["hierarchy"].append(
                    f"{source} -> {target} ({source_kind} contains {target_kind})"
                )
            elif target_kind == port:
                holds_port.add(source)
            elif target_kind == linecard:
                linecards[source].append(target)
        elif source_kind == domain and target_kind == switch:
            controllers[target] = controllers.get(target, 0) + 1
        else:
            found["hierarchy"].append(
                f"{source} -> {target} ({source_kind} controls {target_kind})"
            )
    roots = [name for name, kind in kinds.items() if kind == schema.root]
    capacity = schema.capacity_attr
    for entity in model.entities:
        name, kind = entity.name, entity.kind
        held = containers.get(name, 0)
        if held != (kind != schema.root):
            found["one-container"].append(f"{name} ({held} containers)")
        if name not in touched:
            found["no-isolated"].append(name)
        if kind == port:
            value = entity.attrs.get(capacity)
            if type(value) not in NUMBERS or not 0 < value < math.inf:  # type: ignore[operator]
                found["port-capacity"].append(name)
        if kind == switch:
            if name not in holds_port and not any(card in holds_port for card in linecards[name]):
                found["switch-has-port"].append(name)
            controlled = controllers.get(name, 0)
            if controlled != 1:
                found["one-controller"].append(f"{name} ({controlled} controllers)")
    lines = []
    for name, _ in INVARIANTS:
        if name == "one-root" and len(roots) != 1:
            lines.append(_line(name, roots) if roots else "one-root: no root entity")
        elif found.get(name):
            lines.append(_line(name, found[name]))
    return lines
