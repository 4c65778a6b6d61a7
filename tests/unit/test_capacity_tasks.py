"""Seeded capacity tasks: the generator and the reference solution over seeds 1-50 per level."""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from functools import cache

import pytest

from netdojo.scenarios.capacity import (
    CapacityTask,
    broken_invariants,
    check_answers,
    digest,
    draw_task,
    generate_model,
)
from netdojo.scenarios.capacity.chain import ANSWER_PICKS, Step
from netdojo.scenarios.capacity.generate import SIZES, draw_schema
from netdojo.scenarios.capacity.params import AddQuery
from netdojo.scenarios.capacity.schema import PLAIN_SCHEMA

SEEDS = range(1, 51)
LARGE_SEEDS = range(1, 11)
"""Level 3's models are drawn in a second or so each; fewer seeds keep the suite quick."""
LEVELS = (1, 2, 3)


@cache
def task(level: int, seed: int) -> CapacityTask:
    """A level-1 task, kept for several tests (larger ones are drawn afresh, to keep memory
    small)."""
    return draw_task(level, random.Random(seed))


def _check_chain(steps: list[Step]) -> None:
    """Each parameter taken from an earlier step is what that step yields."""
    refs = [(at, ref) for at, step in enumerate(steps) for ref in step.refs.values()]
    assert len(steps) == 1 or any(ref.pick in ANSWER_PICKS for _, ref in refs)
    for at, ref in refs:
        assert ref.step < at
        earlier, field = steps[ref.step], next(iter(steps[at].refs))
        value = getattr(steps[at].params, field)
        if ref.pick == "first":
            assert value == earlier.answer[0]  # type: ignore[index]
        elif ref.pick == "last":
            assert value == earlier.answer[-1]  # type: ignore[index]
        elif ref.pick == "count":
            assert isinstance(steps[at].params, AddQuery)
            assert len(value) == earlier.answer


def _check_steps(drawn: CapacityTask) -> None:
    """Reads leave the model as it is; every change leaves a valid, different model."""
    before = drawn.model
    for step in drawn.steps:
        if step.answer is not None:
            assert step.model_after is before, step.kind
        else:
            after = step.model_after
            assert broken_invariants(after, drawn.plan_schema) == [], step.kind
            assert (after.entities, after.relations) != (before.entities, before.relations)
        before = step.model_after
    assert drawn.expected_model is before
    assert drawn.expected_answer == [step.answer for step in drawn.steps]


@pytest.mark.parametrize("level", LEVELS)
def test_seeds_give_valid_models_and_valid_reference_solutions(level: int) -> None:
    """For each seed: the generator gives the same valid model twice (once on its own, once
    inside the task), of the level's size; the task has the level's number of steps, chained
    through answers, and each step's expected model keeps the invariants."""
    low, high = SIZES[level].entities
    for seed in LARGE_SEEDS if level == 3 else SEEDS:
        schema, model = generate_model(level, random.Random(seed))
        assert broken_invariants(model, schema) == [], seed
        assert low <= len(model.entities) <= high, seed
        drawn = task(level, seed) if level == 1 else draw_task(level, random.Random(seed))
        assert (drawn.plan_schema, drawn.model) == (schema, model), seed
        assert len(drawn.steps) == level
        _check_steps(drawn)
        _check_chain(drawn.steps)


def test_level_one_is_plain_and_higher_levels_vary_the_schema() -> None:
    assert {task(1, seed).plan_schema for seed in SEEDS} == {PLAIN_SCHEMA}
    for level in (2, 3):
        schemas = [draw_schema(level, random.Random(seed)) for seed in SEEDS]
        assert len({s.capacity_attr for s in schemas}) >= 4
        assert len({s.port for s in schemas}) >= 4
        assert any(s.rack for s in schemas) and any(not s.rack for s in schemas)
        assert any(s.linecard for s in schemas) and any(not s.linecard for s in schemas)


def test_names_vary_per_seed() -> None:
    roots = {task(1, seed).model.entities[0].name for seed in SEEDS}
    ports = {
        next(e.name for e in task(1, seed).model.entities if e.kind == PLAIN_SCHEMA.port)
        for seed in SEEDS
    }
    assert len(roots) >= 10 and len(ports) >= 25


def test_the_expected_answer_passes_and_wrong_ones_fail() -> None:
    drawn = next(
        drawn
        for seed in SEEDS
        if (drawn := draw_task(2, random.Random(seed))).steps[-1].answer is not None
    )
    right = drawn.expected_answer
    ordered = [step.ordered for step in drawn.steps]
    assert check_answers(right, ordered, right) == []
    assert check_answers(right, ordered, json.dumps(right)) == []
    assert check_answers(right, ordered, right[:-1]) == [
        "the answer has 1 element(s); the task has 2 step(s)"
    ]
    assert check_answers(right, ordered, "{") == ["the answer is not JSON"]
    not_a_list = check_answers(right, ordered, {"answer": right})
    assert not_a_list[0].startswith("the answer is not a JSON array")
    wrong = [*right[:-1], "nonsense"]
    assert check_answers(right, ordered, wrong) == ["step 2: wrong answer"]


def test_an_unknown_level_is_refused() -> None:
    with pytest.raises(ValueError, match="no capacity level 4"):
        draw_task(4, random.Random(1))


def test_a_task_is_identical_in_another_process() -> None:
    code = (
        "import hashlib, random; from netdojo.scenarios.capacity import draw_task, digest; "
        "t = draw_task(3, random.Random(7)); "
        "print(digest(t.model), digest(t.expected_model), "
        "hashlib.sha256(t.brief.encode()).hexdigest())"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
    )
    here = draw_task(3, random.Random(7))
    brief = hashlib.sha256(here.brief.encode()).hexdigest()
    assert done.stdout.split() == [digest(here.model), digest(here.expected_model), brief]
