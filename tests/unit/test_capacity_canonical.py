"""Canonical form and digest of plan models, and the differences a judge reports."""

from __future__ import annotations

import json
import random

import pytest

from netdojo.scenarios.capacity import (
    Entity,
    PlanModel,
    PlanModelError,
    canonical,
    compare,
    digest,
    generate_model,
)
from netdojo.scenarios.capacity.schema import PLAIN_SCHEMA
from tests.unit.capacity_small import small_model

S = PLAIN_SCHEMA


def _shuffled(model: PlanModel, seed: int) -> PlanModel:
    """The same model with entities, relations and attribute keys in another order, written
    as JSON with floats for whole numbers, and read back."""
    rng = random.Random(seed)
    data = json.loads(model.to_json())
    rng.shuffle(data["entities"])
    rng.shuffle(data["relations"])
    for entity in data["entities"]:
        items = [(k, float(v) if isinstance(v, int) else v) for k, v in entity["attrs"].items()]
        rng.shuffle(items)
        entity["attrs"] = dict(items)
        order = list(entity)
        rng.shuffle(order)
        data["entities"][data["entities"].index(entity)] = {k: entity[k] for k in order}
    return PlanModel.from_json(json.dumps(data, indent=rng.choice([None, 2])))


def test_order_and_number_spelling_do_not_change_the_digest() -> None:
    _, model = generate_model(2, random.Random(4))
    for seed in range(3):
        other = _shuffled(model, seed)
        assert other != model
        assert canonical(other) == canonical(model)
        assert digest(other) == digest(model)
        assert compare(model, other) == []


def test_extra_attributes_in_any_order_are_canonical() -> None:
    one = Entity(name="x", kind=S.port, attrs={"b": 1, "a": "z", S.capacity_attr: 5})
    two = Entity(name="x", kind=S.port, attrs={S.capacity_attr: 5.0, "a": "z", "b": 1})
    model = small_model()
    a = PlanModel(entities=[*model.entities, one], relations=model.relations)
    b = PlanModel(entities=[two, *model.entities], relations=list(reversed(model.relations)))
    assert digest(a) == digest(b)


def test_compare_finds_a_removed_entity_and_a_changed_attribute() -> None:
    model = small_model()
    changed = Entity(name="a1-sw9.p0", kind=S.port, attrs={S.capacity_attr: 40 * 10**9})
    entities = [changed if e.name == "a1-sw9.p0" else e for e in model.entities if e.name != "S2"]
    given = PlanModel(entities=entities, relations=model.relations)
    assert digest(given) != digest(model)
    lines = compare(model, given)
    assert lines[0] == "1 entities missing: S2"
    assert lines[1].startswith("1 entities have other attributes: a1-sw9.p0 (")
    assert "expected 100000000000" in lines[1]
    assert compare(given, model)[0] == "1 entities not expected: S2"


def test_compare_finds_relations_and_kinds_and_repeated_names() -> None:
    model = small_model()
    moved = [
        r.model_copy(update={"source": "A2"}) if (r.target, r.kind) == ("a1-sw2", S.contains) else r
        for r in model.relations
    ]
    renamed = [
        e.model_copy(update={"kind": "EK_SWITCH"}) if e.name == "a2-sw1" else e
        for e in model.entities
    ]
    given = PlanModel(entities=[*renamed, renamed[0]], relations=moved)
    lines = compare(model, given)
    assert lines == [
        "1 names appear more than once: J",
        "1 entities have another kind: a2-sw1 (EK_SWITCH, expected EK_PACKET_SWITCH)",
        "1 relations missing: A1 -RK_CONTAINS-> a1-sw2",
        "1 relations not expected: A2 -RK_CONTAINS-> a1-sw2",
    ]


def test_compare_quotes_only_a_few_names() -> None:
    model = small_model()
    given = PlanModel(entities=model.entities[:3], relations=[])
    lines = compare(model, given)
    assert all(line.count(",") <= 5 for line in lines)
    assert lines[0].startswith(f"{len(model.entities) - 3} entities missing: ")


def test_a_model_that_does_not_validate_says_where() -> None:
    text = json.dumps(
        {
            "entities": [{"name": "J", "type": "EK_JUPITER"}, {"name": 3, "kind": "x"}],
            "relations": [{"kind": "RK_CONTAINS", "source": "J"}],
        }
    )
    with pytest.raises(PlanModelError) as raised:
        PlanModel.from_json(text)
    message = str(raised.value)
    assert "entities.0.kind: Field required" in message
    assert "entities.0.type: Extra inputs are not permitted" in message
    assert "entities.1.name: Input should be a valid string" in message
    assert "relations.0.target: Field required" in message
    with pytest.raises(PlanModelError, match="Invalid JSON"):
        PlanModel.from_json("{not json")


def test_a_model_round_trips_through_json() -> None:
    model = small_model()
    assert PlanModel.from_json(model.to_json()) == model
    assert PlanModel.from_json(model.to_json(indent=2)) == model


def test_a_boolean_is_not_the_number_one() -> None:
    model = small_model()
    flagged = Entity(name="S2", kind=S.superblock, attrs={"drained": True})
    counted = Entity(name="S2", kind=S.superblock, attrs={"drained": 1.0})
    a, b = (
        PlanModel(
            entities=[new if e.name == "S2" else e for e in model.entities],
            relations=model.relations,
        )
        for new in (flagged, counted)
    )
    assert digest(a) != digest(b)
    assert compare(a, b) == ["1 entities have other attributes: S2 (drained=1.0, expected True)"]
