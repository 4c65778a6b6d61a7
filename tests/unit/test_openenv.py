"""The OpenEnv adapter before any lab: served on a loopback socket and driven by OpenEnv's own
client over episodes that need no lab, from reset to the reward of submit."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import anyio
import httpx
import pytest
from openenv.core.env_server.mcp_types import CallToolAction, ToolErrorType
from typer.testing import CliRunner

from netdojo.cli import app
from netdojo.scenarios.generate import generate
from netdojo.servers.openenv_client import NetdojoEnvClient
from netdojo.servers.openenv_env import (
    EpisodeObservation,
    NetdojoEnvironment,
    ToolCallObservation,
    openenv_app,
)
from netdojo.servers.serving import free_port, serve_uvicorn

from .fake_episodes import UNSOLVED, Openings

pytestmark = pytest.mark.anyio
FAMILY, LEVEL, SEED = "static-routing", 1, 1
SCENARIO = generate(FAMILY, LEVEL, SEED)
ROUTER = next(d.name for d in SCENARIO.public.devices if d.role == "router")
CHANGE = {"device": ROUTER, "command": "ip link set eth0 up"}
HIDDEN = [t.id for t in SCENARIO.hidden.targets + SCENARIO.hidden.guards] + ["target:0"]


def _hides_the_answer(text: str) -> None:
    for secret in [*HIDDEN, SCENARIO.id, FAMILY]:
        assert secret not in text, secret


@asynccontextmanager
async def served(openings: Openings, sessions: int = 1) -> AsyncIterator[str]:
    """The OpenEnv server of episodes opened by ``openings``, on a free loopback port."""
    port = free_port()
    episodes = partial(NetdojoEnvironment, opener=openings)
    async with serve_uvicorn(openenv_app(episodes, sessions), "127.0.0.1", port):
        yield f"http://127.0.0.1:{port}"


async def test_reset_hands_out_the_public_half_and_the_tools() -> None:
    async with served(Openings()) as url, NetdojoEnvClient(base_url=url) as env:
        opened = await env.reset(family=FAMILY, level=LEVEL, seed=SEED)
        listed = await env.list_tools()
        state = await env.state()
    shown = opened.observation
    assert isinstance(shown, EpisodeObservation) and not opened.done
    assert shown.brief == SCENARIO.public.brief
    assert shown.constraints == SCENARIO.public.constraints
    assert [d.name for d in shown.topology.devices] == [d.name for d in SCENARIO.public.devices]
    assert "submit" in [t.name for t in shown.tools] and listed == shown.tools
    assert state.episode_id == shown.episode_id and state.step_count == 0
    _hides_the_answer(shown.model_dump_json() + state.model_dump_json())


async def test_a_tool_call_is_answered_with_its_result_or_a_tool_level_error() -> None:
    async with served(Openings()) as url, NetdojoEnvClient(base_url=url) as env:
        await env.reset(family=FAMILY, level=LEVEL, seed=SEED)
        looked = await env.step(CallToolAction(tool_name="topology", arguments={}))
        unknown = await env.call_tool("reboot", {"device": ROUTER})
        refused = await env.call_tool("show", {"device": "nowhere", "command": "show ip route"})
        state = await env.state()
    answer = looked.observation
    assert isinstance(answer, ToolCallObservation) and answer.error is None
    assert [d["name"] for d in answer.result["devices"]] == [
        d.name for d in SCENARIO.public.devices
    ]
    assert (looked.done, looked.reward) == (False, 0.0)
    assert isinstance(unknown.observation, ToolCallObservation)
    assert unknown.observation.error is not None and not unknown.done
    assert unknown.observation.error.error_type == ToolErrorType.TOOL_NOT_FOUND
    assert unknown.observation.error.message == "Unknown tool: reboot"
    assert isinstance(refused.observation, ToolCallObservation)
    assert refused.observation.error is not None and refused.observation.result is None
    assert refused.observation.error.error_type == ToolErrorType.EXECUTION_ERROR
    assert refused.observation.error.message.startswith("Error executing tool show: ")
    assert state.step_count == 3 and state.tool_calls == 2, "an unknown tool is not counted"


async def test_submit_ends_the_episode_with_done_and_the_reward() -> None:
    openings = Openings()
    async with served(openings) as url:
        async with NetdojoEnvClient(base_url=url) as env:
            await env.reset(family=FAMILY, level=LEVEL, seed=SEED)
            await env.call_tool("execute", CHANGE)
            last = await env.call_tool("submit", {"summary": "fixed"})
            after = await env.call_tool("topology", {})
            state = await env.state()
        with anyio.fail_after(10):
            while openings.opened[0].closed == 0:
                await anyio.sleep(0.02)
    ended = last.observation
    assert isinstance(ended, ToolCallObservation) and ended.result["accepted"] is True
    assert last.done and last.reward == 1.0 and not ended.truncated
    assert ended.info.ending is not None and ended.info.ending.outcome == "solved"
    assert isinstance(after.observation, ToolCallObservation) and after.done
    assert after.reward == 0.0 and after.observation.error is not None
    assert "the work was submitted" in after.observation.error.message
    assert state.done and state.submitted and state.ending == ended.info.ending
    _hides_the_answer(ended.model_dump_json() + state.model_dump_json())


async def test_the_call_budget_truncates_and_sessions_have_labs_of_their_own() -> None:
    openings = Openings([UNSOLVED])
    async with (
        served(openings, sessions=2) as url,
        NetdojoEnvClient(base_url=url) as one,
        NetdojoEnvClient(base_url=url) as two,
    ):
        first = (await one.reset(family="host-config", seed=4)).observation
        second = (await two.reset(seed=SEED)).observation
        listed = await one.list_tools()
        for _ in range(60):
            spent = await one.call_tool("topology", {})
    assert isinstance(first, EpisodeObservation) and isinstance(second, EpisodeObservation)
    assert first.brief == generate("host-config", LEVEL, 4).public.brief
    assert second.brief == SCENARIO.public.brief and listed == first.tools
    assert spent.done and isinstance(spent.observation, ToolCallObservation)
    assert spent.observation.truncated and spent.observation.info.ending is not None
    assert spent.observation.info.ending.reason == "calls"
    assert [scenario.family for scenario in (e.scenario for e in openings.opened)] == [
        "host-config",
        FAMILY,
    ]


async def test_a_bad_reset_is_a_server_error_and_the_session_goes_on_with_its_defaults() -> None:
    async with served(Openings(failing=1)) as url, NetdojoEnvClient(base_url=url) as env:
        with pytest.raises(RuntimeError, match="did not come up"):
            await env.reset(seed=SEED)
        with pytest.raises(RuntimeError, match=r"unknown reset arguments \['levle'\]"):
            await env.reset(levle=2)
        with pytest.raises(RuntimeError, match="unknown family"):
            await env.reset(family="bgp-everything")
        await env.reset(family="host-config", seed=SEED)
        opened = await env.reset(seed=SEED)
    assert isinstance(opened.observation, EpisodeObservation)
    assert opened.observation.brief == SCENARIO.public.brief, "the server's family by default"


async def test_episodes_live_on_sessions_only() -> None:
    """A stateless reset would deploy a lab only to tear it down: those routes are not served."""
    async with served(Openings()) as url, httpx.AsyncClient(base_url=url) as client:
        assert (await client.post("/reset", json={"seed": 1})).status_code == 404
        assert (await client.get("/health")).json() == {"status": "healthy"}
        assert (await client.get("/metadata")).json()["name"] == "netdojo"


def test_the_command_serves_on_loopback_by_default() -> None:
    shown = CliRunner().invoke(app, ["openenv", "--help"])
    assert shown.exit_code == 0 and "127.0.0.1" in shown.output


def test_the_core_never_imports_openenv() -> None:
    check = (
        "import sys, netdojo.cli, netdojo.judges.environment, netdojo.servers.gym_env; "
        "print([m for m in sys.modules if m.startswith('openenv')])"
    )
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
