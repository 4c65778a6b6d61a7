"""Chains of queries where each step builds on the one before.

A step after the first is about something the previous step yields: the first or last entity
of its ranking, the number it counted, the entity it was about (``subject``) or the container
it acted in (``scope``). A chain of two or more steps has at least one link through an answer
(first, last or count), so the steps cannot be solved apart. Each step records the concrete
parameters, which of them came from an earlier step, its answer and the model after it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from netdojo.scenarios.capacity.draws import Draw, draw_about, draw_add, draw_anywhere
from netdojo.scenarios.capacity.generate import Generated
from netdojo.scenarios.capacity.graph import Index
from netdojo.scenarios.capacity.invariants import broken_invariants
from netdojo.scenarios.capacity.ops import solve
from netdojo.scenarios.capacity.params import (
    QUERY_KINDS,
    AddQuery,
    Answer,
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
from netdojo.scenarios.capacity.schema import PlanModel

Pick = Literal["first", "last", "count", "subject", "scope"]
ANSWER_PICKS: tuple[Pick, ...] = ("first", "last", "count")
READS: frozenset[QueryKind] = frozenset({"list", "count", "rank", "what_if"})
"""The kinds that only read; after a change, the next step is mostly one of them."""
MAX_FED_PORTS = 64
CHAIN_LENGTH = {1: 1, 2: 2, 3: 3}
FIRST_WEIGHTS: dict[QueryKind, int] = {
    "list": 1,
    "count": 2,
    "rank": 4,
    "add": 1,
    "remove": 1,
    "set_speed": 1,
    "move": 1,
    "what_if": 1,
}
"""How often a chain starts with each kind: mostly with a query whose answer can feed on."""
REF_FIELD: dict[QueryKind, str] = {
    "list": "parent",
    "count": "scope",
    "rank": "parent",
    "add": "parent",
    "remove": "target",
    "set_speed": "switch",
    "move": "switch",
    "what_if": "target",
}
"""The parameter a link from an earlier step fills (a count fills ``ports`` instead)."""


class StepRef(BaseModel):
    """Where a parameter's value comes from: what step ``step`` (0-based) yields."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    step: int
    pick: Pick


class Step(BaseModel):
    """One query of a task: its parameters, the ones taken from an earlier step, the expected
    answer (``ordered``: whether the order of a list of names matters) and the model after it."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    params: Query
    refs: dict[str, StepRef] = {}
    answer: Answer
    ordered: bool
    model_after: PlanModel

    @property
    def kind(self) -> QueryKind:
        return self.params.kind


@dataclass(frozen=True)
class Focus:
    """Something a step yields for the next one: an entity or a number."""

    pick: Pick
    name: str | None = None
    number: int | None = None


def _subject(query: Query) -> str | None:
    if isinstance(query, ListQuery | RankQuery):
        return query.parent
    if isinstance(query, CountQuery):
        return query.scope
    if isinstance(query, AddQuery):
        return query.name if query.what == "switch" else None
    if isinstance(query, SetSpeedQuery | MoveQuery):
        return query.switch
    if isinstance(query, WhatIfQuery):
        return query.target
    return None


def _scope(query: Query, before: Index) -> str | None:
    if isinstance(query, AddQuery):
        return query.parent
    if isinstance(query, RemoveQuery):
        return before.parent[query.target]
    if isinstance(query, SetSpeedQuery):
        return before.parent[query.switch]
    if isinstance(query, MoveQuery):
        return query.to
    if isinstance(query, WhatIfQuery):
        if query.scenario == "drain":
            return before.ancestor(query.target, ("superblock",))
        return query.scope
    return None


def focuses(step: Step, before: Index) -> list[Focus]:
    """What ``step`` (drawn on ``before``) offers the next step."""
    query, answer = step.params, step.answer
    found = []
    if isinstance(query, RankQuery) and isinstance(answer, list) and answer:
        found += [Focus("first", answer[0]), Focus("last", answer[-1])]
    counted_ports = isinstance(query, CountQuery) and query.of_role == "port"
    if counted_ports and isinstance(answer, int) and 1 <= answer <= MAX_FED_PORTS:
        found.append(Focus("count", number=answer))
    subject, scope = _subject(query), _scope(query, before)
    if subject is not None:
        found.append(Focus("subject", subject))
    if scope is not None and scope != subject:
        found.append(Focus("scope", scope))
    return found


def _follow(d: Draw, focus: Focus, kind: QueryKind) -> tuple[Query, str] | None:
    """A query of ``kind`` built on ``focus``, with the parameter the focus fills."""
    if focus.number is not None:
        if kind != "add":
            return None
        holders = [h for role in ("agg_block", "spine_block", "rack") for h in d.ix.of_role(role)]
        holders = [h for h in holders if "switch" in d.ix.schema.child_roles(d.ix.role[h])]
        query = draw_add(d, d.rng.choice(holders), ports=focus.number)
        return (query, "ports") if query is not None else None
    assert focus.name is not None
    if focus.name not in d.ix.entity:
        return None
    query = draw_about(d, kind, focus.name)
    return (query, REF_FIELD[kind]) if query is not None else None


def _gives_away(queries: list[tuple[Query, dict[str, StepRef]]]) -> bool:
    """Whether a parameter not taken from an earlier step names an entity that one is picked
    from an earlier ranking (a new port is named after its switch, a move may go to it): the
    brief would give that answer away."""
    hidden = {
        getattr(query, field)
        for query, refs in queries
        for field, ref in refs.items()
        if ref.pick in ("first", "last")
    }
    for query, refs in queries:
        for key, value in query.model_dump().items():
            if key in refs or key == "kind":
                continue
            for text in value if isinstance(value, tuple | list) else [value]:
                if isinstance(text, str) and any(name in text for name in hidden):
                    return True
    return False


def _step(ix: Index, query: Query, refs: dict[str, StepRef]) -> Step:
    answer, after = solve(ix, query)
    return Step(
        params=query,
        refs=refs,
        answer=answer,
        ordered=isinstance(query, RankQuery),
        model_after=after,
    )


def _next(d: Draw, steps: list[Step], before: Index) -> Step | None:
    """A step built on the last of ``steps`` (drawn on ``before``), on ``d``'s model."""
    previous, at = steps[-1], len(steps)
    drawn = [(step.params, step.refs) for step in steps]
    options = [(focus, kind) for focus in focuses(previous, before) for kind in QUERY_KINDS]
    linked = [option for option in options if option[0].pick in ANSWER_PICKS]
    loose = [option for option in options if option[0].pick not in ANSWER_PICKS]
    d.rng.shuffle(linked)
    d.rng.shuffle(loose)
    if previous.answer is None and d.rng.random() < 0.7:
        linked.sort(key=lambda option: option[1] not in READS)
        loose.sort(key=lambda option: option[1] not in READS)
    for focus, kind in linked + loose if d.rng.random() < 0.75 else loose + linked:
        built = _follow(d, focus, kind)
        if built is None or built[0] == previous.params:
            continue
        query, field = built
        refs = {field: StepRef(step=at - 1, pick=focus.pick)}
        if not _gives_away([*drawn, (query, refs)]):
            return _step(d.ix, query, refs)
    return None


def _attempt(generated: Generated, level: int, rng: random.Random, first: Index) -> list[Step]:
    length = CHAIN_LENGTH[level]
    d = Draw(first, generated, level, rng)
    kinds = list(FIRST_WEIGHTS)
    weights = [1] * len(kinds) if length == 1 else list(FIRST_WEIGHTS.values())
    query = None
    while query is None:
        query = draw_anywhere(d, rng.choices(kinds, weights)[0])
    steps = [_step(first, query, {})]
    before = first
    while len(steps) < length:
        after = steps[-1].model_after
        ix = before if after is before.model else Index(after, generated.schema)
        step = _next(Draw(ix, generated, level, rng), steps, before)
        if step is None:
            return []
        steps.append(step)
        before = ix
    return steps


def draw_chain(generated: Generated, level: int, rng: random.Random) -> list[Step]:
    """The steps of a level's task: one query at level 1, a chain of 2 or 3 above it."""
    first = Index(generated.model, generated.schema)
    while True:
        steps = _attempt(generated, level, rng, first)
        linked = any(ref.pick in ANSWER_PICKS for step in steps for ref in step.refs.values())
        if steps and (len(steps) == 1 or linked):
            for step in steps:
                if step.answer is None:
                    problems = broken_invariants(step.model_after, generated.schema)
                    assert not problems, (step.params, problems)
            return steps
