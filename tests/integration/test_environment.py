"""The step environment on live labs: the reference fix applied through `step` solves the
instance with the full reward; refusals come back as tool errors; shaping adds up."""

from __future__ import annotations

import pytest

from netdojo.judges.environment import NetworkEnvironment
from netdojo.scenarios.generate import generate
from netdojo.scenarios.model import ToolCall

pytestmark = pytest.mark.anyio
FAMILY, LEVEL, SEED = "static-routing", 1, 2
SUBMIT = ToolCall(tool="submit", arguments={"summary": "applied the fix"})


async def test_the_reference_fix_through_step_solves_with_reward_one() -> None:
    scenario = generate(FAMILY, LEVEL, SEED)
    async with NetworkEnvironment() as env:
        observation = await env.reset(FAMILY, LEVEL, SEED)
        assert observation.brief == scenario.public.brief
        unknown = await env.step(ToolCall(tool="reboot", arguments={}))
        assert unknown.is_error and unknown.error == "Unknown tool: reboot" and not unknown.done
        bad = await env.step(ToolCall(tool="ping", arguments={"source": "nowhere"}))
        assert bad.is_error and bad.error is not None and not bad.done
        assert bad.error.startswith("Error executing tool ping: destination is required")
        for call in scenario.hidden.solution:
            step = await env.step(call)
            assert not step.is_error and not step.done and step.reward == 0.0, step.error
        last = await env.step(SUBMIT)
        assert last.done and not last.truncated and last.reward == 1.0
        assert last.info.ending is not None and last.info.ending.outcome == "solved"
        after = await env.step(ToolCall(tool="topology", arguments={}))
        assert after.is_error and after.done and after.reward == 0.0
        assert after.error is not None and "the work was submitted" in after.error
    assert env.state().episode_id is None, "the lab is torn down"
    assert env.record is not None and env.record.outcome == "solved"


async def test_shaped_rewards_add_up_to_the_final_reward() -> None:
    scenario = generate(FAMILY, LEVEL, SEED)
    async with NetworkEnvironment(shaped=True) as env:
        await env.reset(FAMILY, LEVEL, SEED)
        rewards = [(await env.step(call)).reward for call in scenario.hidden.solution]
        last = await env.step(SUBMIT)
    assert last.info.ending is not None and last.info.ending.reward == 1.0
    assert env.record is not None and env.record.verdict is not None
    at_start = env.record.verdict.targets_passed_at_start  # the guards all pass at the start
    assert sum([*rewards, last.reward]) == pytest.approx(1.0 - at_start)
