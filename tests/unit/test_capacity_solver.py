"""The reference solver on a model whose answers are worked out by hand, and how answers are
compared."""

from __future__ import annotations

import pytest

from netdojo.scenarios.capacity import answers_equal, broken_invariants, digest
from netdojo.scenarios.capacity.graph import Index
from netdojo.scenarios.capacity.ops import removable, solve
from netdojo.scenarios.capacity.params import (
    AddQuery,
    CountQuery,
    ListQuery,
    MoveQuery,
    Query,
    RankQuery,
    RemoveQuery,
    SetSpeedQuery,
    WhatIfQuery,
)
from netdojo.scenarios.capacity.schema import PLAIN_SCHEMA, PlanModel
from tests.unit.capacity_small import G, small_model

S = PLAIN_SCHEMA


def _run(query: Query) -> tuple[object, PlanModel]:
    model = small_model()
    answer, after = solve(Index(model, S), query)
    assert broken_invariants(after, S) == []
    return answer, after


@pytest.mark.parametrize(
    ("query", "answer"),
    [
        (RankQuery(parent="A1", child_role="switch"), ["a1-sw10", "a1-sw9", "a1-sw2"]),
        (RankQuery(parent="S1", child_role="agg_block"), ["A1", "A2"]),
        (RankQuery(parent="J", child_role="superblock"), ["S1", "S2"]),
        (CountQuery(scope="J", of_role="port"), 9),
        (CountQuery(scope="S1", of_role="switch"), 5),
        (CountQuery(scope="A1", of_role="port"), 5),
        (ListQuery(parent="S1", child_role="agg_block"), ["A1", "A2"]),
        (ListQuery(parent="J", child_role="control_domain"), ["cd1", "cd2"]),
        (WhatIfQuery(scenario="drain", target="A2", threshold_bps=700 * G), ["S1", "S2"]),
        (WhatIfQuery(scenario="drain", target="A2", threshold_bps=650 * G), ["S2"]),
        (WhatIfQuery(scenario="fail", target="a1-sw10", scope="A1", unit="Gbps"), 250),
        (WhatIfQuery(scenario="fail", target="a1-sw10", scope="S1", unit="Mbps"), 850_000),
    ],
)
def test_reads_answer_and_leave_the_model_alone(query: Query, answer: object) -> None:
    model = small_model()
    got, after = solve(Index(model, S), query)
    assert got == answer
    assert after is model


def test_a_removal_takes_what_the_entity_contains_and_its_relations() -> None:
    _, after = _run(RemoveQuery(target="A1"))
    gone = {"A1", "a1-sw9", "a1-sw10", "a1-sw2", "a1-sw9.p0", "a1-sw9.p1", "a1-sw10.p0"}
    gone |= {"a1-sw2.p0", "a1-sw2.p1"}
    names = {e.name for e in after.entities}
    assert names == {e.name for e in small_model().entities} - gone
    assert not any(r.source in gone or r.target in gone for r in after.relations)


def test_what_may_be_removed() -> None:
    ix = Index(small_model(), S)
    assert removable(ix, "a1-sw9.p0")
    assert not removable(ix, "a2-sw1.p0")  # the switch's last port
    assert not removable(ix, "cd1")  # it controls switches
    assert not removable(ix, "J")
    assert removable(ix, "S2")


def test_an_added_switch_comes_with_its_ports_and_controller() -> None:
    query = AddQuery(
        what="switch",
        name="a3-sw7",
        parent="A3",
        capacity_bps=25 * G,
        ports=("a3-sw7.p0", "a3-sw7.p1"),
        controller="cd9",
        new_controller=True,
    )
    _, after = _run(query)
    ix = Index(after, S)
    assert ix.parent["a3-sw7"] == "A3" and ix.controller["a3-sw7"] == "cd9"
    assert ix.parent["cd9"] == "J"
    assert ix.capacity("a3-sw7") == 50 * G
    assert ix.entity["a3-sw7.p1"].attrs == {S.capacity_attr: 25 * G}


def test_an_added_port_joins_its_switch() -> None:
    _, after = _run(AddQuery(what="port", name="s2-sw1.p9", parent="s2-sw1", capacity_bps=10 * G))
    assert Index(after, S).capacity("S2") == 35 * G


def test_a_speed_change_touches_only_that_switch_ports() -> None:
    model = small_model()
    _, after = _run(SetSpeedQuery(switch="a1-sw2", capacity_bps=400 * G))
    assert Index(after, S).capacity("a1-sw2") == 800 * G
    changed = [a for a, b in zip(model.entities, after.entities, strict=True) if a != b]
    assert [e.name for e in changed] == ["a1-sw2.p0", "a1-sw2.p1"]


def test_a_moved_switch_changes_the_ranking_of_its_new_block() -> None:
    _, after = _run(MoveQuery(switch="a1-sw2", to="A3"))
    answer, _ = solve(Index(after, S), RankQuery(parent="A3", child_role="switch"))
    assert answer == ["a1-sw2", "s2-sw1"]
    assert digest(after) != digest(small_model())


@pytest.mark.parametrize(
    ("expected", "given", "ordered", "equal"),
    [
        (3, 3, False, True),
        (3, 3.0, False, True),
        (3, 3.5, False, False),
        (3, "3", False, False),
        (1, True, False, False),
        (3, None, False, False),
        (None, None, False, True),
        (None, 0, False, False),
        (None, [], False, False),
        (["a", "b"], ["b", "a"], False, True),
        (["a", "b"], ["b", "a"], True, False),
        (["a", "b"], ["a", "b"], True, True),
        (["a", "b"], ["a", "b", "b"], False, False),
        (["a", "b"], ["a"], False, False),
        (["a", "b"], "a, b", False, False),
        (["a", "b"], ["a", 2], False, False),
        ([], [], False, True),
        ([], None, False, False),
        (["a"], {"a": 1}, False, False),
    ],
)
def test_answers_equal(expected: object, given: object, ordered: bool, equal: bool) -> None:
    assert answers_equal(expected, given, ordered) is equal  # type: ignore[arg-type]
