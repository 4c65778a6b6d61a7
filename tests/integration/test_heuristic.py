"""The heuristic agent on one level-1 episode of each family below, at a seed drawn afresh each
run, judged as an assessment judges it (the judge's grading gives routing time to settle). It
may leave an instance unsolved; what an honest agent must show holds on every one: it looks
before it changes anything, breaks no guard, changes nothing out of scope, fakes nothing, and
ends with a judged outcome.

Seeds are drawn as the family-wide live checks draw them (`draws`): printed, and replayed with
NETDOJO_LIVE_SEED.
"""

from __future__ import annotations

import itertools
import secrets
from typing import Any

import pytest

from netdojo.clients.catalogue import policy_factory
from netdojo.judges.integrity import scope_of
from netdojo.judges.runner import run_episode
from netdojo.reports.records import Budgets
from netdojo.scenarios.generate import generate
from netdojo.tools.registry import call_arguments

from .arena import in_process
from .draws import instance_seed, run_draw

pytestmark = pytest.mark.anyio

FAMILIES = [
    "static-routing",
    "ospf-adjacency",
    "bgp-peering",
    "ospf-build",
    "ipv6-routing",
    "ipv6-bgp",
    "dhcp-relay",
]
JUDGED = ("solved", "partial", "unsolved")
LOOKING = {"topology", "show"}


@pytest.mark.parametrize("family", FAMILIES)
async def test_the_heuristic_looks_first_and_breaks_nothing(family: str) -> None:
    seed = instance_seed(run_draw(f"heuristic {family}"), family, 1)
    instance = f"{family} L1 seed {seed}"
    scenario = generate(family, 1, seed)
    heuristic = policy_factory("heuristic")()
    record = await run_episode(
        scenario, in_process(heuristic), Budgets(), f"heuristic-{secrets.token_hex(6)}"
    )
    verdict = record.verdict
    assert verdict is not None and verdict.tests is not None, (instance, record.error)
    safety, integrity = verdict.safety, verdict.tests.integrity
    assert safety.safe, (instance, safety)
    assert not integrity.fakes and not integrity.unexplained, (instance, integrity)
    assert record.outcome in JUDGED, (instance, record.outcome, record.error, verdict.detail)
    assert record.trajectory is not None
    steps = record.trajectory.steps
    involved = scope_of(scenario)
    changed = [step for step in steps if step.changed_state]
    strays = [
        step.arguments for step in changed if _device(step.tool, step.arguments) not in involved
    ]
    assert not strays, (instance, sorted(involved), strays)
    before = list(itertools.takewhile(lambda step: not step.changed_state, steps))
    first = [(step.tool, step.summary) for step in steps[: len(before) + 1]]
    assert {step.tool for step in before} >= LOOKING, (instance, first)


def _device(tool: str, arguments: dict[str, Any]) -> str | None:
    """The device a call acts on, as the judge reads it."""
    typed = call_arguments(tool, arguments)
    return typed.acts_on() if typed is not None else None
