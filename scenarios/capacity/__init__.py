"""Capacity planning on data-centre models: seeded plan models with their schema variations,
queries and chains of them with a reference solver, briefs in many surface forms, and the
canonical form a judge compares models by (no family is registered from here)."""

from netdojo.scenarios.capacity.canonical import canonical, compare, digest
from netdojo.scenarios.capacity.generate import generate_model
from netdojo.scenarios.capacity.invariants import broken_invariants
from netdojo.scenarios.capacity.queries import (
    DEFAULT_MODEL_PATH,
    CapacityTask,
    Step,
    answers_equal,
    check_answers,
    draw_task,
)
from netdojo.scenarios.capacity.schema import (
    INVARIANTS,
    Entity,
    PlanModel,
    PlanModelError,
    Relation,
    Schema,
)

__all__ = [
    "DEFAULT_MODEL_PATH",
    "INVARIANTS",
    "CapacityTask",
    "Entity",
    "PlanModel",
    "PlanModelError",
    "Relation",
    "Schema",
    "Step",
    "answers_equal",
    "broken_invariants",
    "canonical",
    "check_answers",
    "compare",
    "digest",
    "draw_task",
    "generate_model",
]
