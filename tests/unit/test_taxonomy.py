"""The fault taxonomy: every type any family draws has a class, and the classes are published."""

from __future__ import annotations

from pathlib import Path

from netdojo.scenarios import registry
from netdojo.scenarios.model import Fault
from netdojo.scenarios.taxonomy import CLASSES, TAXONOMY, Diagnosis, fault_class, root_cause
from netdojo.tools.lab_tools import SUBMIT

DOCS = Path(__file__).resolve().parents[2] / "docs" / "scenarios.md"


def _drawn_types() -> set[str]:
    """Every fault type registered and every type a reactive family draws, whenever added."""
    types = set(registry.fault_types())
    for family in registry.families().values():
        if family.kind == "reactive":
            types |= set(family.types)
    return types


def test_every_registered_and_drawn_type_has_a_class() -> None:
    unmapped = sorted(t for t in _drawn_types() if fault_class(t) is None)
    assert not unmapped, f"map these fault types in scenarios/taxonomy.py: {unmapped}"


def test_the_table_names_only_known_classes_and_types_that_exist() -> None:
    assert set(TAXONOMY.values()) <= set(CLASSES) - {"none"}
    assert set(TAXONOMY) <= _drawn_types(), set(TAXONOMY) - _drawn_types()


def test_the_docs_publish_every_class() -> None:
    text = DOCS.read_text()
    assert all(f"`{name}`" in text for name in CLASSES), [n for n in CLASSES if n not in text]


def test_the_docs_list_every_type() -> None:
    text = DOCS.read_text()
    missing = sorted(t for t in _drawn_types() if f"`{t}`" not in text)
    assert not missing, f"list these fault types in docs/scenarios.md: {missing}"


def _fault(type_id: str, device: str, herring: bool = False) -> Fault:
    return Fault(type=type_id, device=device, inject=[], fix=[], present=[], red_herring=herring)


def test_the_root_cause_leaves_red_herrings_out_and_a_healthy_network_is_none() -> None:
    faults = [
        _fault("ospf.area_mismatch", "r2"),
        _fault("static.blackhole", "r4"),
        _fault("red_herring", "r1", herring=True),
    ]
    truth = root_cause(faults)
    assert truth.devices == {"r2", "r4"} and truth.classes == {"adjacency", "static_route"}
    assert root_cause([_fault("red_herring", "r1", herring=True)]).classes == {"none"}
    assert root_cause([]).devices == frozenset()


def test_submit_takes_a_diagnosis_of_places_and_classes() -> None:
    given = SUBMIT.checked(
        {"summary": "s", "diagnosis": {"locations": ["r2:eth1", "r3"], "classes": ["link"]}}
    )
    assert given.diagnosis == Diagnosis(locations=["r2:eth1", "r3"], classes=["link"])
    assert given.diagnosis.devices == {"r2", "r3"} and given.diagnosis.claims_fault
    assert not Diagnosis(classes=["none"]).claims_fault
    schema = SUBMIT.input_schema()
    assert "title" not in str(schema)
    assert "kubernetes_policy" in str(schema)
