"""A capacity-planning instance: the drawn task, its planner lab, its reference program and
the hidden tests the judge reads the agent's files by."""

from __future__ import annotations

import random

from netdojo.scenarios.capacity.canonical import digest
from netdojo.scenarios.capacity.lab import PLANNER, planner_lab
from netdojo.scenarios.capacity.queries import CapacityTask, draw_task
from netdojo.scenarios.capacity.solution import CHANGES, solution_code
from netdojo.scenarios.hidden_tests import (
    HiddenTest,
    PlanAnswerParams,
    PlanAnswerTest,
    PlanModelParams,
    PlanModelTest,
    PlanValidParams,
    PlanValidTest,
)
from netdojo.scenarios.model import DeviceFacts, HiddenHalf, PublicHalf, ToolCall
from netdojo.scenarios.registry import Built

CONSTRAINTS = [
    "Work on the model through the python tool; the model file is the only state judged.",
    "Leave the model valid: every invariant of the schema holds after your changes.",
]


def _model_test(task: CapacityTask, role: str) -> PlanModelTest:
    """The model the queries leave: a target when a query changes it, else a guard that it
    is left as it was."""
    expected = task.expected_model
    changed = role == "target"
    return PlanModelTest(
        id=f"{role}:model",
        description="the model is the one the queries' changes leave"
        if changed
        else "the model is left as it was (the queries only ask)",
        device=PLANNER,
        params=PlanModelParams(
            digest=digest(expected),
            entities=len(expected.entities),
            relations=len(expected.relations),
        ),
    )


def _tests(task: CapacityTask) -> tuple[list[HiddenTest], list[HiddenTest]]:
    """(targets, guards)."""
    answer = PlanAnswerTest(
        id="target:answer",
        description=f"the answer to each of the {len(task.steps)} queries is right",
        device=PLANNER,
        params=PlanAnswerParams(
            answers=list(task.expected_answer), ordered=[step.ordered for step in task.steps]
        ),
    )
    valid = PlanValidTest(
        id="guard:invariants",
        description="the model keeps every invariant of its schema",
        device=PLANNER,
        params=PlanValidParams(plan_schema=task.plan_schema.model_dump(mode="json")),
    )
    if any(step.kind in CHANGES for step in task.steps):
        return [answer, _model_test(task, "target")], [valid]
    return [answer], [valid, _model_test(task, "guard")]


def planning_instance(level: int, rng: random.Random, lab_name: str) -> Built:
    task = draw_task(level, rng)
    targets, guards = _tests(task)
    public = PublicHalf(
        brief=task.brief,
        devices=[DeviceFacts(name=PLANNER, role="host", interfaces=[])],
        links=[],
        constraints=CONSTRAINTS,
    )
    hidden = HiddenHalf(
        lab=planner_lab(task.model.to_json(), lab_name),
        solution=[ToolCall(tool="python", arguments={"code": solution_code(task)})],
        targets=targets,
        guards=guards,
    )
    return Built(public, hidden)
