"""Capacity briefs: many surface forms per query kind, exact quantities, references that never
name what they resolve to, and the facts an agent needs (schema, path, answer shape)."""

from __future__ import annotations

import random
import re
from decimal import Decimal

import pytest

from netdojo.scenarios.capacity import draw_task
from netdojo.scenarios.capacity import phrases as P
from netdojo.scenarios.capacity.chain import draw_chain
from netdojo.scenarios.capacity.generate import generate_plan
from netdojo.scenarios.capacity.phrasing import (
    Wording,
    number_text,
    phrase_step,
    roles_of,
    speed_text,
)

TABLES = ("LIST", "COUNT", "RANK", "ADD_SWITCH", "ADD_PORT", "REMOVE", "SET_SPEED", "MOVE")
TABLES += ("DRAIN", "FAIL")
STEP_LINE = re.compile(r"^(?:Step (\d+): |(\d+)\. |\((\d+)\) |(\d+)\) )(.*)$", re.MULTILINE)
UNITS = {
    "Gbps": 1,
    "Gb/s": 1,
    "gigabits per second": 1,
    "G": 1,
    "Mbps": Decimal("0.001"),
    "Tbps": 1000,
}


def _steps(brief: str) -> dict[int, str]:
    found = {}
    for match in STEP_LINE.finditer(brief):
        number = next(group for group in match.groups()[:4] if group)
        found[int(number)] = match.group(5)
    return found


@pytest.mark.parametrize("table", TABLES)
def test_every_kind_has_six_or_more_forms_that_start_with_a_word(table: str) -> None:
    forms = getattr(P, table)
    assert len(set(forms)) >= 6
    assert all(form[0].isalpha() and form[0].islower() for form in forms)


def test_one_kind_appears_in_six_or_more_forms_over_200_seeds() -> None:
    generated = generate_plan(1, random.Random(5))
    steps = next(
        steps
        for seed in range(100)
        if (steps := draw_chain(generated, 1, random.Random(seed)))[0].kind == "rank"
    )
    roles = roles_of(generated.model, generated.schema, steps)
    templates, texts = set(), set()
    for seed in range(1, 201):
        wording = Wording(
            generated.schema, generated.naming, roles, "J", steps, random.Random(seed)
        )
        phrase = phrase_step(wording, 0)
        templates.add(phrase.template)
        texts.add(phrase.text)
    assert len(templates) >= 6 and len(texts) >= 6


def test_drawn_briefs_word_a_kind_in_six_or_more_shapes() -> None:
    shapes = set()
    for seed in range(1, 201):
        task = draw_task(1, random.Random(seed))
        if task.steps[0].kind != "count":
            continue
        text = _steps(task.brief)[1]
        for entity in task.model.entities:
            text = text.replace(entity.name, "<name>")
        shapes.add(re.sub(r'"[A-Z_]+"', "<kind>", text))
    assert len(shapes) >= 6


@pytest.mark.parametrize("gbps", [10, 25, 40, 100, 400, 1230, 12_340, 250_000])
def test_speeds_are_written_exactly_in_every_form(gbps: int) -> None:
    seen = set()
    for seed in range(60):
        text = speed_text(gbps * 10**9, random.Random(seed))
        match = re.fullmatch(r"([\d,]+(?:\.\d+)?) ?(.+)", text)
        assert match, text
        number, unit = Decimal(match.group(1).replace(",", "")), match.group(2)
        assert number * UNITS[unit] == gbps, text
        seen.add(unit)
    assert len(seen) >= 4


def test_small_numbers_are_words_or_digits() -> None:
    written = {number_text(4, random.Random(seed)) for seed in range(20)}
    assert written == {"four", "4"}
    assert number_text(48, random.Random(1)) == "48"


@pytest.mark.parametrize("level", [2, 3])
def test_a_reference_never_names_what_it_resolves_to(level: int) -> None:
    for seed in range(1, 31 if level == 2 else 8):
        task = draw_task(level, random.Random(seed))
        lines = _steps(task.brief)
        assert sorted(lines) == list(range(1, level + 1))
        text = "\n".join(lines.values())
        for at, step in enumerate(task.steps):
            for field, ref in step.refs.items():
                if ref.pick in ("first", "last"):
                    assert getattr(step.params, field) not in text, (seed, at)
                assert f"step {ref.step + 1}" in lines[at + 1], (seed, at)


def test_the_brief_holds_the_schema_the_path_and_the_answer_shape() -> None:
    task = draw_task(2, random.Random(11), model_path="/data/fabric.json")
    brief = task.brief
    assert "/data/fabric.json" in brief and "/srv/plan" not in brief
    assert task.plan_schema.describe() in brief
    assert task.plan_schema.capacity_attr in brief
    assert f"{len(task.steps)} element(s)" in brief
    for at, step in enumerate(task.steps):
        shape = "null" if step.answer is None else "JSON"
        assert re.search(rf"- step {at + 1}: {shape}|- step {at + 1}: a {shape}", brief)


def test_briefs_vary_in_their_frame() -> None:
    briefs = [draw_task(1, random.Random(seed)).brief for seed in range(1, 41)]
    assert len({brief.splitlines()[0] for brief in briefs}) >= 4
    assert len({brief.index("Schema of this model") < brief.index("1") for brief in briefs}) >= 1
