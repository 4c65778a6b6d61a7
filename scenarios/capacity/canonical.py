"""The canonical form of a plan model, its digest, and what differs between two models.

Two models are the same when their canonical texts are: entities sorted by name with sorted
attributes, relations sorted, and a whole number written as a float (``1e11``) written as the
integer it is. Order in the file, key order and whitespace do not matter; anything else does.
A judge compares digests and, when they differ, reports `compare`'s short list. Both are linear
(plus sorting) in the model's size, unlike a graph-isomorphism test.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from operator import itemgetter
from typing import Any

from netdojo.scenarios.capacity.bulk import bulk
from netdojo.scenarios.capacity.schema import Entity, PlanModel, Scalar

SHOWN = 5


def _scalar(value: Scalar) -> Scalar:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _attrs(entity: Entity) -> dict[str, Scalar]:
    attrs = entity.attrs
    if len(attrs) < 2 and not any(type(value) is float for value in attrs.values()):
        return attrs  # already canonical: most entities hold nothing or one whole number
    return {key: _scalar(attrs[key]) for key in sorted(attrs)}


def _same(a: Scalar, b: Scalar) -> bool:
    """Whether two attribute values are canonically equal: ``1`` and ``1.0`` are, ``1`` and
    ``true`` are not."""
    return a == b and (type(a) is bool) == (type(b) is bool)


def _same_attrs(a: dict[str, Scalar], b: dict[str, Scalar]) -> bool:
    return a.keys() == b.keys() and all(_same(value, b[key]) for key, value in a.items())


def _record(entity: Entity) -> dict[str, Any]:
    return {"name": entity.name, "kind": entity.kind, "attrs": _attrs(entity)}


def _text(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _relation_keys(model: PlanModel) -> list[tuple[str, str, str]]:
    return [(relation.kind, relation.source, relation.target) for relation in model.relations]


def canonical(model: PlanModel) -> str:
    """The model as one canonical JSON text."""
    with bulk():
        return _canonical(model)


def _canonical(model: PlanModel) -> str:
    records = sorted((_record(entity) for entity in model.entities), key=itemgetter("name"))
    if len({record["name"] for record in records}) != len(records):
        records.sort(key=lambda record: (record["name"], _text(record)))  # by all they hold
    relations = [
        {"kind": kind, "source": source, "target": target}
        for kind, source, target in sorted(_relation_keys(model))
    ]
    return _text({"entities": records, "relations": relations})


def digest(model: PlanModel) -> str:
    """The sha256 (hex) of the model's canonical text."""
    return hashlib.sha256(canonical(model).encode()).hexdigest()


def _line(count_what: str, items: list[str]) -> str:
    shown = ", ".join(items[:SHOWN]) + (", ..." if len(items) > SHOWN else "")
    return f"{len(items)} {count_what}: {shown}"


def _show(key: tuple[str, str, str]) -> str:
    return f"{key[1]} -{key[0]}-> {key[2]}"


def compare(expected: PlanModel, given: PlanModel) -> list[str]:
    """Short lines saying how ``given`` differs from ``expected``; empty when they are the same
    model (the same canonical text)."""
    with bulk():
        return _compare(expected, given)


def _compare(expected: PlanModel, given: PlanModel) -> list[str]:
    return _entity_lines(expected, given) + _relation_lines(expected, given)


def _entity_lines(expected: PlanModel, given: PlanModel) -> list[str]:
    want = {entity.name: entity for entity in expected.entities}
    have = {entity.name: entity for entity in given.entities}
    lines = []
    if len(have) != len(given.entities):
        counts = Counter(entity.name for entity in given.entities)
        repeated = sorted(name for name, count in counts.items() if count > 1)
        lines.append(_line("names appear more than once", repeated))
    missing = sorted(want.keys() - have.keys())
    if missing:
        lines.append(_line("entities missing", missing))
    extra = sorted(have.keys() - want.keys())
    if extra:
        lines.append(_line("entities not expected", extra))
    kinds, attrs = [], []
    for name in sorted(want.keys() & have.keys()):
        a, b = want[name], have[name]
        if a.kind != b.kind:
            kinds.append(f"{name} ({b.kind}, expected {a.kind})")
        if not _same_attrs(a.attrs, b.attrs):
            wanted, got = a.attrs, b.attrs
            changed = sorted(
                key
                for key in wanted.keys() | got.keys()
                if key not in wanted or key not in got or not _same(wanted[key], got[key])
            )
            shown = "; ".join(f"{k}={got.get(k)!r}, expected {wanted.get(k)!r}" for k in changed)
            attrs.append(f"{name} ({shown})")
    if kinds:
        lines.append(_line("entities have another kind", kinds))
    if attrs:
        lines.append(_line("entities have other attributes", attrs))
    return lines


def _relation_lines(expected: PlanModel, given: PlanModel) -> list[str]:
    given_keys = _relation_keys(given)
    want, have = set(_relation_keys(expected)), set(given_keys)
    lines = []
    if len(have) != len(given_keys):
        counts = Counter(given_keys)
        repeated = sorted(_show(key) for key, count in counts.items() if count > 1)
        lines.append(_line("relations appear more than once", repeated))
    lost = sorted(want - have)
    if lost:
        lines.append(_line("relations missing", [_show(key) for key in lost]))
    added = sorted(have - want)
    if added:
        lines.append(_line("relations not expected", [_show(key) for key in added]))
    return lines
