"""The step environment before any lab: what it hands out, how it answers every call as the MCP
server would, how episodes end, and the rewards they earn."""

from __future__ import annotations

from typing import Any, cast

import anyio
import pytest
from mcp import Client

import netdojo.judges.runner
from netdojo.judges.environment import NetworkEnvironment, NoEpisode
from netdojo.judges.episode import ResetFailed
from netdojo.labs.runtime import LiveLab
from netdojo.reports.records import Budgets
from netdojo.scenarios import registry
from netdojo.scenarios.generate import generate
from netdojo.scenarios.model import ToolCall
from netdojo.servers.mcp_server import evaluation_server
from netdojo.tools.lab_tools import LabTools
from netdojo.tools.trajectory import Trajectory

from .fake_episodes import UNSOLVED, AbsentLab, Openings, graded

pytestmark = pytest.mark.anyio
FAMILY, LEVEL, SEED = "static-routing", 1, 1
SCENARIO = generate(FAMILY, LEVEL, SEED)
ROUTER = next(d.name for d in SCENARIO.public.devices if d.role == "router")
CHANGE = ToolCall(tool="execute", arguments={"device": ROUTER, "command": "ip link set eth0 up"})
LOOK = ToolCall(tool="topology", arguments={})
SUBMIT = ToolCall(tool="submit", arguments={"summary": "fixed"})
HIDDEN = [t.id for t in SCENARIO.hidden.targets + SCENARIO.hidden.guards] + ["target:0"]


def _hides_the_answer(text: str) -> None:
    for secret in [*HIDDEN, SCENARIO.id, FAMILY]:
        assert secret not in text, secret


async def test_reset_hands_out_the_public_half_and_the_tools_as_mcp_lists_them() -> None:
    async with NetworkEnvironment(opener=Openings()) as env:
        observation = await env.reset(FAMILY, LEVEL, SEED)
    assert observation.brief == SCENARIO.public.brief
    assert observation.constraints == SCENARIO.public.constraints
    assert [d.name for d in observation.topology.devices] == [
        d.name for d in SCENARIO.public.devices
    ]
    server = evaluation_server(_tools(), registry.family(FAMILY).tools)
    async with Client(server) as client:
        listed = (await client.list_tools()).tools
    assert [(t.name, t.description, t.input_schema) for t in observation.tools] == [
        (t.name, t.description, t.input_schema) for t in listed
    ]
    _hides_the_answer(observation.model_dump_json())


def _tools() -> LabTools:
    return LabTools(cast(LiveLab, AbsentLab()), SCENARIO.public, Trajectory(episode="mcp"))


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("reboot", {"device": ROUTER}),
    ("kubectl", {"command": "get pods"}),
    ("show", {"device": ROUTER}),
    ("ping", {"source": ROUTER, "destination": "srv1", "count": 50}),
    ("topology", {"verbose": True}),
    ("show", {"device": "nowhere", "command": "show ip route"}),
    ("configure", {"device": "nowhere", "lines": '["ip route 10.0.0.0/8 10.1.1.1"]'}),
    ("configure", {"device": ROUTER, "lines": "not json"}),
    ("execute", {"device": ROUTER, "command": "rm -rf /"}),
]


async def test_every_refusal_is_the_error_an_mcp_client_reads() -> None:
    server = evaluation_server(_tools(), registry.family(FAMILY).tools)
    async with NetworkEnvironment(opener=Openings()) as env, Client(server) as client:
        await env.reset(FAMILY, LEVEL, SEED)
        for tool, arguments in CALLS:
            over_mcp = await client.call_tool(tool, arguments)
            text = "".join(getattr(block, "text", "") for block in over_mcp.content)
            step = await env.step(ToolCall(tool=tool, arguments=arguments))
            assert over_mcp.is_error and step.is_error, (tool, text)
            assert step.error == text and step.result is None
            assert not step.done and step.reward == 0.0


async def test_a_result_is_the_structured_content_an_mcp_client_reads() -> None:
    server = evaluation_server(_tools(), registry.family(FAMILY).tools)
    async with NetworkEnvironment(opener=Openings()) as env, Client(server) as client:
        await env.reset(FAMILY, LEVEL, SEED)
        for call in (LOOK, CHANGE):
            over_mcp = await client.call_tool(call.tool, call.arguments)
            step = await env.step(call)
            assert not step.is_error and step.result == over_mcp.structured_content
        assert step.info.changed_state and step.info.tool_calls == 2


async def test_submit_ends_the_episode_judged_and_later_calls_are_refused() -> None:
    async with NetworkEnvironment(opener=Openings()) as env:
        await env.reset(FAMILY, LEVEL, SEED)
        await env.step(CHANGE)
        assert env.record is None
        last = await env.step(SUBMIT)
        assert last.done and not last.truncated and last.reward == 1.0
        assert last.info.ending is not None and last.info.ending.outcome == "solved"
        after = await env.step(LOOK)
        state = env.state()
    assert after.is_error and after.done and after.reward == 0.0
    assert after.error == (
        "Error executing tool topology: the work was submitted; no further tool calls are accepted"
    )
    assert state.done and state.submitted and state.steps == 3 and state.tool_calls == 2
    record = env.record
    assert record is not None and record.verdict is not None and record.outcome == "solved"
    assert record.trajectory is not None and len(record.trajectory.steps) == 2
    for text in (last.model_dump_json(), after.model_dump_json(), state.model_dump_json()):
        _hides_the_answer(text)


async def test_the_call_budget_truncates_the_episode() -> None:
    env = NetworkEnvironment(Budgets(max_tool_calls=2), opener=Openings([UNSOLVED]))
    await env.reset(FAMILY, LEVEL, SEED)
    first = await env.step(LOOK)
    nowhere = {"device": "nowhere", "command": "show ip route"}
    bad = await env.step(ToolCall(tool="show", arguments=nowhere))  # a refused call counts
    assert not first.done and bad.done and bad.truncated and bad.is_error
    assert bad.info.ending is not None and bad.info.ending.reason == "calls"
    assert bad.info.ending.outcome == "unsolved" and bad.reward == 0.0
    after = await env.step(SUBMIT)
    assert after.error == (
        "Error executing tool submit: the budget of 2 tool calls is spent; the episode has ended"
    )
    await env.close()


async def test_the_time_budget_ends_the_episode_before_the_next_call() -> None:
    env = NetworkEnvironment(Budgets(time_budget_s=0.05), opener=Openings([UNSOLVED]))
    await env.reset(FAMILY, LEVEL, SEED)
    await anyio.sleep(0.1)
    late = await env.step(CHANGE)
    await env.close()
    assert late.is_error and late.done and late.truncated
    assert late.error == (
        "Error executing tool execute: the time budget of 0.05s is spent; the episode has ended"
    )
    assert late.info.ending is not None and late.info.ending.outcome == "timeout"
    assert env.record is not None and env.record.trajectory is not None
    assert env.record.trajectory.steps == [], "a call after the time budget never runs"


async def test_unknown_tools_and_refused_arguments_never_reach_the_budget() -> None:
    """As over MCP: such a call never reaches the episode's tools."""
    async with NetworkEnvironment(Budgets(max_tool_calls=1), opener=Openings()) as env:
        await env.reset(FAMILY, LEVEL, SEED)
        for call in (ToolCall(tool="reboot", arguments={}), ToolCall(tool="show", arguments={})):
            assert not (await env.step(call)).done
        assert env.state().tool_calls == 0 and env.state().steps == 2


async def test_shaped_rewards_add_up_to_the_final_reward_less_the_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(netdojo.judges.runner, "SETTLE_S", 0.0)
    grades = [graded([True, False], [True]), graded([True, True], [False]), graded([True], [True])]
    async with NetworkEnvironment(shaped=True, opener=Openings(grades)) as env:
        await env.reset(FAMILY, LEVEL, SEED)
        rewards = [(await env.step(call)).reward for call in (CHANGE, CHANGE, LOOK, SUBMIT)]
    assert rewards == [0.5, -0.5, 0.0, 1.0]
    assert env.record is not None and env.record.outcome == "solved"


async def test_unshaped_steps_earn_nothing_until_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(netdojo.judges.runner, "SETTLE_S", 0.0)
    grades = [graded([True, False], [True])]
    async with NetworkEnvironment(opener=Openings(grades)) as env:
        await env.reset(FAMILY, LEVEL, SEED)
        rewards = [(await env.step(call)).reward for call in (CHANGE, LOOK, SUBMIT)]
    assert rewards == [0.0, 0.0, 0.25]
    assert env.record is not None and env.record.outcome == "partial"


async def test_a_reset_that_cannot_deploy_raises_and_the_next_one_tries_again() -> None:
    openings = Openings(failing=1)
    async with NetworkEnvironment(opener=openings) as env:
        with pytest.raises(ResetFailed, match="static-routing level 1 seed 1 did not come up"):
            await env.reset(FAMILY, LEVEL, SEED)
        with pytest.raises(NoEpisode):
            await env.step(LOOK)
        first = await env.reset(FAMILY, LEVEL, SEED)
        second = await env.reset(FAMILY, LEVEL, SEED)
        assert first.episode_id != second.episode_id and first.brief == second.brief
        assert [e.closed for e in openings.opened] == [1, 0], "reset closes the open episode"
    assert [e.closed for e in openings.opened] == [1, 1]
    await env.close()
    assert [e.closed for e in openings.opened] == [1, 1], "closing again does nothing"
    assert env.state().episode_id is None


async def test_a_step_before_any_reset_is_the_callers_mistake() -> None:
    with pytest.raises(NoEpisode, match="call reset first"):
        await NetworkEnvironment(opener=Openings()).step(LOOK)
