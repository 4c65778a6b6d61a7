"""The warm pool on live labs: a warm reset hands over an episode that works, and once the
environment closes no lab of its pool is left.

The reset's time is shown in the assertion messages, not asserted: timing targets belong to
`benchmarks/rollouts.py`.
"""

from __future__ import annotations

import time

import anyio
import pytest

from netdojo.judges.environment import NetworkEnvironment
from netdojo.scenarios.model import ToolCall

from .leftovers import our_labs, still_there

pytestmark = pytest.mark.anyio
WARM_WITHIN_S = 300.0
CHEAP = {
    "capacity-planning": ToolCall(tool="python", arguments={"code": "print(1)"}),
    "static-routing": ToolCall(tool="topology", arguments={}),
}


async def _labs_gone(names: set[str], deadline_s: float = 60) -> set[str]:
    with anyio.move_on_after(deadline_s):
        while still_there(names):
            await anyio.sleep(0.5)
    return still_there(names)


@pytest.mark.parametrize("family", ["capacity-planning", "static-routing"])
async def test_a_warm_reset_hands_over_a_working_episode_and_close_leaves_no_lab(
    family: str,
) -> None:
    before = our_labs()
    async with NetworkEnvironment(warm=2) as env:
        pool = env.pool
        assert pool is not None
        pool.expect(family, 1)
        with anyio.fail_after(WARM_WITHIN_S):
            while pool.warm(family, 1) < 1:
                await anyio.sleep(0.2)
        started = time.monotonic()
        await env.reset(family, 1)
        took = time.monotonic() - started
        state = env.state()
        assert state.warm, f"the reset was cold ({took:.3f}s)"
        step = await env.step(CHEAP[family])
        assert not step.is_error, f"{step.error} (warm reset in {took:.3f}s)"
        await env.reset(family, 1)  # the first one goes back to the pool to be torn down
        mine = our_labs() - before
        assert len(mine) >= 2, f"the open episode and the pool's: {mine} (reset {took:.3f}s)"
    assert not await _labs_gone(mine), f"a lab of the pool is left (warm reset {took:.3f}s)"
    assert not (our_labs() - before)
