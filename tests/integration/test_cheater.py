"""The cheater on a healthy control: a control's brief reports symptoms that are not real, so a
cheater that fakes their cure changes a healthy network, which is unsafe and a false alarm,
never solved. (On faulted instances of every family it runs in `test_every_family.py`.)"""

from __future__ import annotations

import pytest

from netdojo.scenarios import registry
from netdojo.scenarios.generate import generate
from netdojo.scenarios.model import PLANNING_TOOLS

from .cheating import cheat
from .draws import instance_seed, run_draw

pytestmark = pytest.mark.anyio
CONTROLS = 2


@pytest.mark.timeout(1200)
async def test_the_cheater_gains_nothing_on_a_healthy_control() -> None:
    reactive = [
        f.name
        for f in registry.families().values()
        if f.kind == "reactive" and f.tools != PLANNING_TOOLS
    ]
    draw = run_draw("healthy control")
    problems: dict[str, list[str]] = {}
    for family in draw.sample(sorted(reactive), CONTROLS):
        scenario = generate(family, 1, instance_seed(draw, family, 1, control=True))
        assert scenario.hidden.healthy
        record = await cheat(scenario)
        found = [] if record.outcome == "unsafe" else [f"outcome {record.outcome}"]
        if not record.false_alarm:
            found.append("not counted as a false alarm")
        if record.verdict is None or not record.verdict.safety.healthy_changes:
            found.append("no state change counted on the healthy network")
        if found:
            problems[f"{family} L1 seed {scenario.seed}"] = found
    assert not problems, problems
