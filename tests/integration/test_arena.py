"""The arena end to end over real A2A on 127.0.0.1: green agent, purple agents, live episodes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from a2a.helpers import get_data_parts, new_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.types import Role
from starlette.applications import Starlette

from netdojo.clients.agents import Policy
from netdojo.clients.assessor import assess
from netdojo.clients.purple import CallerContextBuilder, PurpleExecutor
from netdojo.clients.session import ToolSession
from netdojo.errors import NetdojoError
from netdojo.scenarios.generate import generate
from netdojo.scenarios.hidden_tests import PlanAnswerTest
from netdojo.servers.a2a_app import a2a_routes, agent_card
from netdojo.servers.apps import green_app
from netdojo.servers.serving import free_port, serve_uvicorn
from netdojo.tools.contract import HANDOFF_KEY, EpisodeView

from .arena import builtin_purple

pytestmark = pytest.mark.anyio
ONE = {"families": ["ospf-adjacency"], "levels": [1], "seeds": [1]}


@asynccontextmanager
async def _served(make: Any) -> AsyncIterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    async with serve_uvicorn(make(url, port), "127.0.0.1", port):
        yield url


@asynccontextmanager
async def _arena(purple: Any) -> AsyncIterator[tuple[str, str]]:
    async with (
        _served(lambda url, port: green_app("127.0.0.1", port)) as green,
        _served(purple) as agent,
    ):
        yield green, agent


def _builtin(name: str) -> Any:
    return lambda url, port: builtin_purple(name, url)


def _custom(policy: Policy) -> Any:
    def make(url: str, port: int) -> Starlette:
        card = agent_card("test-agent", "a test policy", url, [], streaming=False)
        return Starlette(
            routes=a2a_routes(card, PurpleExecutor(lambda: policy), CallerContextBuilder())
        )

    return make


async def _assess(purple: Any, **config: Any) -> dict[str, Any]:
    async with _arena(purple) as (green, agent):
        artifacts = await assess(green, {"participants": {"agent": agent}, "config": config})
    return artifacts


def _outcomes(artifacts: dict[str, Any]) -> list[str]:
    return [e["outcome"] for e in artifacts["results"]["episodes"]]


async def test_noop_solves_nothing() -> None:
    artifacts = await _assess(_builtin("noop"), **ONE)
    results = artifacts["results"]
    assert _outcomes(artifacts) == ["unsolved"]
    assert results["summary"]["solved"] == {
        "value": 0.0,
        "ci_low": 0.0,
        "ci_high": pytest.approx(0.79, abs=0.01),
        "n": 1,
    }
    episode = results["episodes"][0]
    assert episode["scenario_id"] and episode["verdict"]["tests"]["targets"][0]["evidence"]
    assert results["schema_version"] == "1.2" and results["provenance"]["frr"]
    steps = artifacts["trajectories"]["trajectories"][0]["trajectory"]["steps"]
    assert [s["tool"] for s in steps] == ["submit"]


async def test_oracle_in_calibration_is_correct_and_safe() -> None:
    artifacts = await _assess(
        _builtin("oracle"), families=["static-routing", "host-config"], levels=[1], episodes=2,
        seed=11, concurrency=2, calibration=True,
    )  # fmt: skip
    assert _outcomes(artifacts) == ["solved", "solved"]
    assert artifacts["results"]["summary"]["safe"]["value"] == 1.0


async def test_the_oracle_is_refused_outside_calibration() -> None:
    with pytest.raises(NetdojoError, match="calibration"):
        await _assess(_builtin("oracle"), **ONE)


async def test_a_cheater_scores_nothing_and_its_fakes_are_named() -> None:
    artifacts = await _assess(_builtin("cheater"), **ONE)
    assert _outcomes(artifacts) in (["unsolved"], ["unsafe"])
    fakes = artifacts["results"]["episodes"][0]["verdict"]["tests"]["integrity"]["fakes"]
    assert fakes and all(f["device"] and f["evidence"] for f in fakes)


async def test_text_mode_completes_an_episode() -> None:
    artifacts = await _assess(_builtin("oracle"), mode="text", calibration=True, **ONE)
    assert _outcomes(artifacts) == ["solved"]
    steps = artifacts["trajectories"]["trajectories"][0]["trajectory"]["steps"]
    assert steps[-1]["tool"] == "submit" and any(s["changed_state"] for s in steps)


class _OneProgram(AgentExecutor):
    """A single-turn agent whose one reply is a program: in calibration, the reference one,
    printing the answer instead of writing it."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        (handed,) = [p[HANDOFF_KEY] for p in get_data_parts(list(context.message.parts))]
        ref = handed["scenario"]  # numbers come through A2A's data parts as floats
        scenario = generate(ref["family"], int(ref["level"]), int(ref["seed"]))
        program = scenario.hidden.solution[0].arguments["code"].rstrip().rsplit("\n", 1)[0]
        (target,) = [t for t in scenario.hidden.targets if isinstance(t, PlanAnswerTest)]
        code = f"{program}\nprint(json.dumps({target.params.answers!r}))"
        reply = f"Here is my program.\n```python\n{code}\n```\n"
        await event_queue.enqueue_event(
            new_message([new_text_part(reply)], context_id=context.context_id, role=Role.ROLE_AGENT)
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


async def test_a_single_reply_program_is_run_and_what_it_prints_submitted() -> None:
    def make(url: str, port: int) -> Starlette:
        card = agent_card("one-program", "replies once with code", url, [], streaming=False)
        return Starlette(routes=a2a_routes(card, _OneProgram(), CallerContextBuilder()))

    planning = {"families": ["capacity-planning"], "levels": [1], "seeds": [3]}
    artifacts = await _assess(make, mode="text", calibration=True, **planning)
    assert _outcomes(artifacts) == ["solved"]
    steps = artifacts["trajectories"]["trajectories"][0]["trajectory"]["steps"]
    assert [s["tool"] for s in steps] == ["python", "submit"]
    assert "answer" in steps[-1]["arguments"]


async def test_crashing_and_hanging_agents_end_their_episodes_and_the_next_runs() -> None:
    async def crash(session: ToolSession, task: EpisodeView) -> str:
        await session.call("topology")
        raise RuntimeError("purple agent exploded")

    async def hang(session: ToolSession, task: EpisodeView) -> str:
        await anyio.sleep_forever()
        return ""

    crashed = await _assess(_custom(crash), families=["static-routing"], seeds=[7, 8])
    assert _outcomes(crashed) == ["agent_error", "agent_error"]
    hung = await _assess(_custom(hang), time_budget_s=5, **ONE)
    assert _outcomes(hung) == ["timeout"]


AGENT = {"a": "http://127.0.0.1:1"}


@pytest.mark.parametrize(
    ("request_body", "reason"),
    [
        ({"participants": {}, "config": {}}, "exactly one participant"),
        ({"participants": AGENT, "config": {"families": ["nope"]}}, "unknown families"),
        ({"participants": AGENT, "config": {"levels": [7]}}, "levels"),
        ({"participants": AGENT, "config": {"episodes": 2, "seeds": [1]}}, "not both"),
        ({"participants": AGENT, "config": {"tirals": 2}}, "tirals"),
        ({"participants": {"a": "ftp://x"}}, "http"),
    ],
)
async def test_a_malformed_request_gets_a_clear_error(
    request_body: dict[str, Any], reason: str
) -> None:
    async with _served(lambda url, port: green_app("127.0.0.1", port)) as green:
        with pytest.raises(NetdojoError, match="bad assessment request") as caught:
            await assess(green, request_body)
    assert reason in str(caught.value)
