"""The invariants of a plan model: each broken one is named, a valid model breaks none."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

import pytest

from netdojo.scenarios.capacity import INVARIANTS, Entity, PlanModel, Relation, broken_invariants
from netdojo.scenarios.capacity.schema import PLAIN_SCHEMA, Schema
from tests.unit.capacity_small import small_model

S = PLAIN_SCHEMA
DOC = Path(__file__).resolve().parents[2] / "docs" / "capacity-planning.md"


def _names(lines: list[str]) -> list[str]:
    return [line.split(":", 1)[0] for line in lines]


def _edit(
    *,
    drop: Collection[str] = (),
    entities: Sequence[Entity] = (),
    relations: Sequence[Relation] = (),
    keep_relations: bool = False,
) -> PlanModel:
    """The small model without the entities in ``drop`` (and, unless ``keep_relations``,
    without their relations), plus ``entities`` and ``relations``; an entity given again by
    name replaces the original."""
    model = small_model()
    replaced = {entity.name for entity in entities}
    kept = [e for e in model.entities if e.name not in drop and e.name not in replaced]
    links = [
        r
        for r in model.relations
        if keep_relations or (r.source not in drop and r.target not in drop)
    ]
    return PlanModel(entities=kept + list(entities), relations=links + list(relations))


def test_the_small_model_is_valid() -> None:
    assert broken_invariants(small_model(), S) == []


def test_an_orphan_port_is_named() -> None:
    model = small_model()
    relations = [r for r in model.relations if r.target != "a1-sw2.p0"]
    lines = broken_invariants(PlanModel(entities=model.entities, relations=relations), S)
    assert _names(lines) == ["one-container", "no-isolated"]
    assert all("a1-sw2.p0" in line for line in lines)


def test_a_switch_without_a_port_is_named() -> None:
    lines = broken_invariants(_edit(drop={"a2-sw1.p0"}), S)
    assert _names(lines) == ["switch-has-port"]
    assert "a2-sw1" in lines[0]


def test_two_roots_are_named() -> None:
    extra = Entity(name="J2", kind=S.root)
    sb = Entity(name="S9", kind=S.superblock)
    lines = broken_invariants(
        _edit(
            entities=[extra, sb], relations=[Relation(kind=S.contains, source="J2", target="S9")]
        ),
        S,
    )
    assert _names(lines) == ["one-root"]
    assert "J, J2" in lines[0]


def test_no_root_is_named() -> None:
    model = small_model()
    entities = [e for e in model.entities if e.kind != S.root]
    lines = broken_invariants(PlanModel(entities=entities, relations=model.relations), S)
    assert "one-root: no root entity" in lines


def test_an_unknown_kind_is_named() -> None:
    lines = broken_invariants(_edit(entities=[Entity(name="A3", kind="EK_BLOCK")]), S)
    assert _names(lines)[0] == "known-kinds"
    assert "A3 (EK_BLOCK)" in lines[0]


@pytest.mark.parametrize("value", [0, -10, "100", True, None, float("nan")])
def test_a_port_without_positive_capacity_is_named(value: object) -> None:
    port = Entity.model_validate(
        {"name": "a1-sw9.p0", "kind": S.port, "attrs": {S.capacity_attr: value}}
    )
    lines = broken_invariants(_edit(entities=[port]), S)
    assert _names(lines) == ["port-capacity"]
    assert "a1-sw9.p0" in lines[0]


def test_a_port_with_the_capacity_under_another_name_is_named() -> None:
    port = Entity(name="a1-sw9.p0", kind=S.port, attrs={"capacity_gbps": 100})
    assert _names(broken_invariants(_edit(entities=[port]), S)) == ["port-capacity"]


def test_a_dangling_relation_is_named() -> None:
    ghost = Relation(kind=S.contains, source="S2", target="ghost")
    lines = broken_invariants(_edit(relations=[ghost]), S)
    assert _names(lines) == ["relation-endpoints"]
    assert "S2 -> ghost" in lines[0]


def test_a_removal_without_cascade_leaves_dangling_relations() -> None:
    lines = broken_invariants(_edit(drop={"a1-sw2"}, keep_relations=True), S)
    assert "relation-endpoints" in _names(lines)


def test_a_repeated_name_and_an_unknown_relation_kind_are_named() -> None:
    twin = Entity(name="cd1", kind=S.control_domain)
    odd = Relation(kind="RK_LINKS", source="S1", target="S2")
    model = small_model()
    bad = PlanModel(entities=[*model.entities, twin], relations=[*model.relations, odd])
    assert _names(broken_invariants(bad, S))[:2] == ["unique-names", "known-relations"]


def test_containment_against_the_hierarchy_is_named() -> None:
    lines = broken_invariants(
        _edit(relations=[Relation(kind=S.contains, source="J", target="a1-sw9.p0")]), S
    )
    assert _names(lines) == ["hierarchy", "one-container"]


@pytest.mark.parametrize("controllers", [0, 2])
def test_a_switch_needs_exactly_one_controller(controllers: int) -> None:
    model = small_model()
    relations = [r for r in model.relations if r.target != "s2-sw1" or r.kind != S.controls]
    relations += [
        Relation(kind=S.controls, source=f"cd{n + 1}", target="s2-sw1") for n in range(controllers)
    ]
    lines = broken_invariants(PlanModel(entities=model.entities, relations=relations), S)
    assert _names(lines) == ["one-controller"]
    assert f"s2-sw1 ({controllers} controllers)" in lines[0]


def test_a_linecard_holds_a_switch_port_and_an_empty_one_does_not() -> None:
    schema = Schema(linecard="EK_LINECARD")
    model = small_model()
    entities = [*model.entities, Entity(name="a1-sw9.lc", kind="EK_LINECARD")]
    relations = [
        Relation(kind=r.kind, source="a1-sw9.lc", target=r.target) if r.source == "a1-sw9" else r
        for r in model.relations
    ]
    relations.append(Relation(kind=S.contains, source="a1-sw9", target="a1-sw9.lc"))
    lines = broken_invariants(PlanModel(entities=entities, relations=relations), schema)
    # every other switch holds its ports directly, which this schema does not allow
    assert _names(lines) == ["hierarchy", "switch-has-port"]
    assert "a1-sw9 " not in lines[1] and "a1-sw9," not in lines[1]
    emptied = [r for r in relations if r.source != "a1-sw9.lc"]
    ports = {r.target for r in relations if r.source == "a1-sw9.lc"}
    kept = [e for e in entities if e.name not in ports]
    lines = broken_invariants(PlanModel(entities=kept, relations=emptied), schema)
    assert "a1-sw9" in next(line for line in lines if line.startswith("switch-has-port"))


def test_a_violation_line_quotes_a_few_names_and_the_count() -> None:
    ports = [e for e in small_model().entities if e.kind == S.port]
    zeroed = [Entity(name=p.name, kind=p.kind, attrs={S.capacity_attr: 0}) for p in ports]
    (line,) = broken_invariants(_edit(entities=zeroed), S)
    assert line.startswith(f"port-capacity: {len(ports)} ports") and line.endswith(", ...")


def test_the_schema_description_states_every_invariant() -> None:
    text = Schema(rack="EK_RACK", linecard="EK_LINECARD").describe()
    for name, _ in INVARIANTS:
        assert f"- {name}: " in text
    assert '"EK_RACK" contains "EK_PACKET_SWITCH"' in text


def test_the_document_states_the_invariants_as_the_code_does() -> None:
    text = DOC.read_text()
    names = S.names()
    for name, statement in INVARIANTS:
        assert f"`{name}`: {statement.format(**names)}" in text, name
