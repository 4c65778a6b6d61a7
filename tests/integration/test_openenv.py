"""The OpenEnv adapter on a live lab: served on loopback and driven by OpenEnv's own client, the
reference solution replayed through steps and the expected answer submitted solve the instance
with the full reward, and closing the session tears its lab down.

A planning model's lab deploys in well under a second, so the capacity-planning family carries
it (the adapter knows no family)."""

from __future__ import annotations

import secrets

import anyio
import pytest

from netdojo.scenarios.generate import generate
from netdojo.scenarios.hidden_tests import PlanAnswerTest
from netdojo.servers.openenv_client import NetdojoEnvClient
from netdojo.servers.openenv_env import EpisodeObservation, ToolCallObservation, openenv_app
from netdojo.servers.serving import free_port, serve_uvicorn

from .leftovers import our_labs, still_there

pytestmark = pytest.mark.anyio
FAMILY, LEVEL = "capacity-planning", 1


async def test_the_reference_solution_through_steps_solves_with_reward_one() -> None:
    seed = 1 + secrets.randbelow(10_000)
    scenario = generate(FAMILY, LEVEL, seed)
    (target,) = [t for t in scenario.hidden.targets if isinstance(t, PlanAnswerTest)]
    port = free_port()
    async with serve_uvicorn(openenv_app(), "127.0.0.1", port):
        async with NetdojoEnvClient(base_url=f"http://127.0.0.1:{port}") as env:
            opened = await env.reset(family=FAMILY, level=LEVEL, seed=seed)
            assert isinstance(opened.observation, EpisodeObservation)
            assert opened.observation.brief == scenario.public.brief
            deployed = await anyio.to_thread.run_sync(our_labs)
            assert deployed, "the session's lab is up"
            unknown = await env.call_tool("reboot", {})
            assert isinstance(unknown.observation, ToolCallObservation) and not unknown.done
            assert unknown.observation.error is not None
            assert unknown.observation.error.message == "Unknown tool: reboot"
            for call in scenario.hidden.solution:
                step = await env.call_tool(call.tool, call.arguments)
                assert isinstance(step.observation, ToolCallObservation)
                assert step.observation.error is None and not step.done, step.observation.error
            answers = target.params.answers
            last = await env.call_tool("submit", {"summary": "the plan", "answer": answers})
            state = await env.state()
        with anyio.fail_after(60):
            while await anyio.to_thread.run_sync(still_there, deployed):
                await anyio.sleep(0.2)
    assert isinstance(last.observation, ToolCallObservation)
    assert last.done and last.reward == 1.0 and not last.observation.truncated, last
    assert last.observation.info.ending is not None
    assert last.observation.info.ending.outcome == "solved"
    assert state.done and state.submitted
