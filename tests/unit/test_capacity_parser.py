"""An adversary that learns the briefs' templates cannot carry out unseen capacity tasks.

A peer benchmark's planning queries come from ten templates, and parsers that map each to code
by a regular expression score perfectly. Here a parser learns from seeds 1-100 of each level:
every brief line that names an entity or a number becomes a template (entity names, kind names
and numbers as slots), and each template is mapped to the steps it stands for and to which
slot fills which parameter (numbers with the unit factor that makes them the parameter). On an
unseen seed it solves the task when it knows the brief's templates and the slots give every
parameter the task has (parameters fed by an earlier step are granted). It must solve most of
its own training briefs (it works) and under 5% of unseen ones.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from functools import cache
from typing import Any

import pytest

from netdojo.scenarios.capacity.chain import Step
from netdojo.scenarios.capacity.queries import CapacityTask, draw_task

TRAIN = range(1, 101)
UNSEEN = range(101, 201)
LEVELS = (1, 2)
"""Level 3 chains three steps of the same phrasings: more templates still, and slow to draw."""
MAX_UNSEEN = 0.05
MIN_TRAINED = 0.5
TOKEN = re.compile(r"[\w.\-/:]+")
FACTORS = (1, 10**3, 10**6, 10**9, 10**12)
Slot = tuple[str, int, int]  # (slot kind, index, factor)
Template = tuple[str, ...]


def _templated(task: CapacityTask) -> tuple[Template, list[str], list[int]]:
    """The brief's lines that name an entity or a number, as templates, with the names and
    numbers their slots held, in order."""
    names = {e.name for e in task.model.entities}
    names |= {
        value
        for step in task.steps
        for value in step.params.model_dump().values()
        if isinstance(value, str)
    }
    kinds = {v for v in task.plan_schema.model_dump().values() if isinstance(v, str)}
    template: list[str] = []
    held_names: list[str] = []
    numbers: list[int] = []

    def slot(found: re.Match[str]) -> str:
        word = found.group(0).strip(".:")
        if word in names:
            held_names.append(word)
            return "{E}"
        if word in kinds:
            return "{K}"
        if word.isdigit():
            numbers.append(int(word))
            return "{N}"
        return found.group(0)

    for line in task.brief.splitlines():
        shaped = TOKEN.sub(slot, line)
        if "{E}" in shaped or "{N}" in shaped:
            template.append(shaped)
    return tuple(template), held_names, numbers


def _slots(step: Step, held: list[str], numbers: list[int]) -> dict[str, Any] | None:
    """Where each of the step's own parameters sits among the slots; None when one is in none."""
    found: dict[str, Any] = {}
    for field, value in step.params.model_dump().items():
        if field == "kind" or field in step.refs:
            continue
        if isinstance(value, str) and value in held:
            found[field] = ("E", held.index(value), 1)
        elif isinstance(value, list | tuple) and value and all(v in held for v in value):
            found[field] = ("L", tuple(held.index(v) for v in value), 1)
        elif isinstance(value, int) and not isinstance(value, bool) and value > 1:
            at = [(i, f) for i, n in enumerate(numbers) for f in FACTORS if n * f == value]
            if not at:
                return None
            found[field] = ("N", *at[0])
        else:
            found[field] = ("C", value, 1)
    return found


def _filled(slots: dict[str, Any], held: list[str], numbers: list[int]) -> dict[str, Any] | None:
    params: dict[str, Any] = {}
    for field, (kind, where, factor) in slots.items():
        try:
            if kind == "E":
                params[field] = held[where]
            elif kind == "L":
                params[field] = [held[i] for i in where]
            elif kind == "N":
                params[field] = numbers[where] * factor
            else:
                params[field] = where
        except IndexError:
            return None
    return params


def _own(step: Step) -> dict[str, Any]:
    dumped = step.params.model_dump()
    return {
        f: list(v) if isinstance(v, tuple) else v
        for f, v in dumped.items()
        if f != "kind" and f not in step.refs
    }


@cache
def _task(level: int, seed: int) -> CapacityTask:
    return draw_task(level, random.Random(seed))


@cache
def _trained(level: int) -> dict[Template, list[tuple[str, dict[str, Any]]]]:
    """Each template seen in training, with the most common reading of it."""
    readings: dict[Template, Counter[str]] = defaultdict(Counter)
    parsed: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for seed in TRAIN:
        task = _task(level, seed)
        template, held, numbers = _templated(task)
        steps = [(s.kind, _slots(s, held, numbers)) for s in task.steps]
        if any(slots is None for _, slots in steps):
            continue
        key = repr(steps)
        parsed[key] = steps  # type: ignore[assignment]
        readings[template][key] += 1
    return {t: parsed[c.most_common(1)[0][0]] for t, c in readings.items()}


def _solves(level: int, seed: int) -> bool:
    task = _task(level, seed)
    template, held, numbers = _templated(task)
    reading = _trained(level).get(template)
    if reading is None or len(reading) != len(task.steps):
        return False
    for (kind, slots), step in zip(reading, task.steps, strict=True):
        if kind != step.kind or _filled(slots, held, numbers) != _own(step):
            return False
    return True


@pytest.mark.parametrize("level", LEVELS)
def test_a_template_parser_solves_its_training_briefs_and_few_unseen_ones(level: int) -> None:
    trained = sum(_solves(level, seed) for seed in TRAIN) / len(TRAIN)
    unseen = sum(_solves(level, seed) for seed in UNSEEN) / len(UNSEEN)
    assert trained >= MIN_TRAINED, f"the parser solves {trained:.0%} of its own briefs"
    assert unseen < MAX_UNSEEN, f"the parser solves {unseen:.0%} of unseen briefs"
