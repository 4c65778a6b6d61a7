"""Capacity tasks: a seeded model, a chain of queries with the reference solution, the brief,
and how an agent's answer is checked.

The agent answers once, with one JSON array holding one element per step in step order: the
step's answer, or ``null`` for a step that only changes the model. Every element is checked
(`check_answers`); the model the agent writes back is judged separately, by canonical form
(`canonical.digest`) and invariants (`invariants.broken_invariants`).

Level 1 is one query on a few hundred entities in the plain schema; level 2 a chain of two on
a few thousand, level 3 a chain of three on tens of thousands, both in drawn schema variations.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from netdojo.scenarios.capacity.bulk import bulk
from netdojo.scenarios.capacity.chain import Step, draw_chain
from netdojo.scenarios.capacity.generate import LEVELS, generate_plan
from netdojo.scenarios.capacity.params import Answer
from netdojo.scenarios.capacity.phrasing import write_brief
from netdojo.scenarios.capacity.schema import PlanModel, Schema

DEFAULT_MODEL_PATH = "/srv/plan/model.json"


class CapacityTask(BaseModel):
    """One task. Public: ``brief``, ``plan_schema``, ``model`` (what the agent finds at
    ``model_path``). Hidden: ``steps``, ``expected_answer``, ``expected_model``."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    level: int
    plan_schema: Schema
    model: PlanModel
    model_path: str
    steps: list[Step]
    expected_answer: list[Answer]
    """One element per step: its answer, or ``None`` for a step that only changes the model."""
    expected_model: PlanModel
    """The model after the last step (the initial model when no step changes it)."""
    brief: str


def draw_task(level: int, rng: random.Random, model_path: str = DEFAULT_MODEL_PATH) -> CapacityTask:
    """The task of ``level`` (1, 2 or 3) that ``rng`` draws."""
    if level not in LEVELS:
        raise ValueError(f"no capacity level {level}; levels are {LEVELS}")
    with bulk():
        generated = generate_plan(level, rng)
        steps = draw_chain(generated, level, rng)
    brief = write_brief(generated.schema, generated.naming, generated.model, steps, model_path, rng)
    return CapacityTask(
        level=level,
        plan_schema=generated.schema,
        model=generated.model,
        model_path=model_path,
        steps=steps,
        expected_answer=[step.answer for step in steps],
        expected_model=steps[-1].model_after,
        brief=brief,
    )


def answers_equal(expected: Answer, given: object, ordered: bool) -> bool:
    """Whether ``given`` (a parsed JSON value) is the answer ``expected``.

    ``None`` only equals ``None``. An integer equals the same integer, or a float with the
    same whole value (``42.0``); never a string or a boolean. A list of names equals a list of
    strings with the same names, in the same order when ``ordered`` (a ranking), else as a
    multiset (so a repeated name is wrong). Nothing else is accepted.
    """
    if expected is None:
        return given is None
    if isinstance(expected, int):
        if isinstance(given, bool) or not isinstance(given, int | float):
            return False
        return given == expected and float(given).is_integer()
    if not isinstance(given, list) or not all(isinstance(item, str) for item in given):
        return False
    return given == expected if ordered else sorted(given) == sorted(expected)


def check_answers(expected: Sequence[Any], ordered: Sequence[bool], given: object) -> list[str]:
    """What is wrong with the submitted answer (a parsed JSON value, or JSON text) to queries
    whose answers are ``expected`` (``ordered``: whether each one's order counts); empty when
    every step's element is right. The lines never quote the expected answer."""
    if isinstance(given, str | bytes):
        try:
            given = json.loads(given)
        except ValueError:
            return ["the answer is not JSON"]
    count = len(expected)
    if not isinstance(given, list):
        return [f"the answer is not a JSON array (expected one with {count} element(s))"]
    if len(given) != count:
        return [f"the answer has {len(given)} element(s); the task has {count} step(s)"]
    return [
        f"step {at + 1}: wrong answer"
        for at, (answer, in_order, value) in enumerate(zip(expected, ordered, given, strict=True))
        if not answers_equal(answer, value, in_order)
    ]
