"""The checkers of capacity-planning tests: they read the files the agent's code left in the
planner device and judge them as data. Nothing the agent wrote is ever run here: the files are
read with a size cap, parsed as JSON and checked by the schema's own invariants."""

from __future__ import annotations

import json
from typing import Any

from netdojo.judges.checks import CheckContext, CheckUnavailable, Observed, checker, ran
from netdojo.scenarios.capacity.canonical import digest
from netdojo.scenarios.capacity.invariants import broken_invariants
from netdojo.scenarios.capacity.lab import ANSWER_PATH, MODEL_PATH
from netdojo.scenarios.capacity.queries import check_answers
from netdojo.scenarios.capacity.schema import PlanModel, PlanModelError, Schema
from netdojo.scenarios.hidden_tests import PlanAnswerTest, PlanModelTest, PlanValidTest

MAX_FILE = 32 * 1024 * 1024
"""Bytes read of a file the agent left; a larger one is not judged."""
SHOWN = 3
"""Broken invariants an evidence line names."""


async def _read(ctx: CheckContext, device: str, path: str, what: str) -> str:
    done = ran(
        await ctx.lab.exec_entered(
            device, ["head", "-c", str(MAX_FILE + 1), path], timeout=20, max_output=MAX_FILE
        ),
        f"reading the {what}",
    )
    if not done.ok:
        raise CheckUnavailable(f"no {what} at {path}: {done.stderr.strip()[:200]}")
    return done.stdout


def _parsed(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raise CheckUnavailable(f"the {what} is not JSON") from None


async def _model(ctx: CheckContext, device: str) -> PlanModel:
    text = await _read(ctx, device, MODEL_PATH, "model")
    try:
        return PlanModel.from_json(text)
    except (PlanModelError, RecursionError) as exc:
        raise CheckUnavailable(f"the model is not a model: {str(exc)[:300]}") from None


@checker(PlanAnswerTest)
async def _plan_answer(ctx: CheckContext, test: PlanAnswerTest) -> Observed:
    given = _parsed(await _read(ctx, test.device, ANSWER_PATH, "answer"), "answer")
    wrong = check_answers(test.params.answers, test.params.ordered, given)
    if wrong:
        return False, "; ".join(wrong[:SHOWN])
    return True, f"the answer to each of the {len(test.params.answers)} queries is right"


@checker(PlanModelTest)
async def _plan_model(ctx: CheckContext, test: PlanModelTest) -> Observed:
    model = await _model(ctx, test.device)
    same = digest(model) == test.params.digest
    counts = f"{len(model.entities)} entities and {len(model.relations)} relations"
    if same:
        return True, f"the model is the expected one ({counts})"
    expected = f"{test.params.entities} and {test.params.relations} expected"
    return False, f"the model differs from the expected one: {counts}, {expected}"


@checker(PlanValidTest)
async def _plan_valid(ctx: CheckContext, test: PlanValidTest) -> Observed:
    schema = Schema.model_validate(test.params.plan_schema)
    broken = broken_invariants(await _model(ctx, test.device), schema)
    if not broken:
        return True, "every invariant of the schema holds"
    return False, f"{len(broken)} broken invariants: {'; '.join(broken[:SHOWN])}"
