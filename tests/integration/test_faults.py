"""Faults around an episode end with their documented outcome, leave no lab behind, and the
assessment goes on: a device killed mid-episode, a fault removed behind the judge's back,
a Docker engine that stops answering for a few seconds, a purple agent whose connection drops.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import docker
import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.helpers import get_message_text, new_data_part, new_message, new_text_part
from a2a.types import Role, SendMessageRequest
from starlette.applications import Starlette

from netdojo.clients.agents import oracle
from netdojo.clients.assessor import assess
from netdojo.clients.purple import CallerContextBuilder, PurpleExecutor
from netdojo.clients.session import ToolCallError, ToolSession
from netdojo.judges.runner import run_episode_with_retry
from netdojo.reports.records import Budgets
from netdojo.reports.summary import summarize
from netdojo.scenarios.generate import generate
from netdojo.servers.a2a_app import a2a_routes, agent_card
from netdojo.servers.apps import green_app
from netdojo.servers.serving import free_port, serve_uvicorn
from netdojo.tools.actions import apply
from netdojo.tools.contract import AgentReport, EpisodeView

from .proxy import docker_proxy, running, tcp_proxy

pytestmark = pytest.mark.anyio
CHEAP = ("static-routing", 1, 1)  # no protected flows: the monitor stays out of the way
NETDOJO = str(Path(sys.executable).parent / "netdojo")
OUTAGE_S = 6.0


def _lab_objects(**labels: str) -> list[str]:
    """Names of the containers and networks carrying all of ``labels``."""
    selector = {"label": ["app=kathara", *(f"{k}={v}" for k, v in labels.items())]}
    client = docker.from_env()
    try:
        containers = client.api.containers(all=True, filters=selector)
        networks = client.api.networks(filters=selector)
    finally:
        client.close()
    return [c["Names"][0] for c in containers] + [n["Name"] for n in networks]


def _owned_by(pid: int) -> list[str]:
    """Objects of labs owned by process ``pid`` (whatever its start time)."""
    client = docker.from_env()
    try:
        found = client.api.containers(all=True, filters={"label": "netdojo.owner"})
    finally:
        client.close()
    return [c["Names"][0] for c in found if c["Labels"]["netdojo.owner"].startswith(f"{pid}:")]


async def test_a_killed_device_is_infra_error_and_a_vanished_fault_environment_invalid() -> None:
    """Attempt 1: a router dies mid-turn, so the lab broke (infra_error) and the episode runs
    again on a fresh lab. Attempt 2: the fault is removed straight on the lab, not through the
    tools, so the task is found solved with no state-changing call (environment_invalid).
    Neither counts against the agent, and neither lab is left."""
    scenario = generate(*CHEAP)
    victim = scenario.hidden.faults[0].device
    labs: list[str] = []

    async def kill_then_repair_out_of_band(view: EpisodeView) -> AgentReport:
        assert view.handle is not None
        lab = view.handle.lab
        labs.append(lab.lab_hash)
        if len(labs) == 1:
            client = docker.from_env()
            try:
                selector = {"label": [f"lab_hash={lab.lab_hash}", f"name={victim}"]}
                (container,) = client.containers.list(filters=selector)
                container.kill()
            finally:
                client.close()
            return AgentReport(detail="watched a router die")
        for call in scenario.hidden.solution:
            assert (await apply(lab, call)).ok
        return AgentReport(detail="did nothing, honestly")

    record = await run_episode_with_retry(scenario, kill_then_repair_out_of_band, Budgets(), "f")
    assert len(labs) == 2 and labs[0] != labs[1], "the retry runs on a fresh lab"
    assert record.attempts == 2 and record.retried_because is not None
    assert record.retried_because.startswith("infra_error")
    assert f"device {victim} is exited" in record.retried_because
    assert record.outcome == "environment_invalid" and record.error
    assert "changed nothing" in record.error
    assert record.verdict is not None and record.verdict.correct
    assert record.verdict.effort.state_changing_calls == 0
    summary = summarize([record])
    assert summary.counted == 0 and summary.excluded == {"environment_invalid": 1}
    assert _lab_objects(lab_hash=labs[0]) == [] and _lab_objects(lab_hash=labs[1]) == []


def _purple_app(policy: Any, url: str) -> Starlette:
    card = agent_card("test-agent", "a test policy", url, [], streaming=False)
    executor = PurpleExecutor(lambda: policy)
    return Starlette(routes=a2a_routes(card, executor, CallerContextBuilder()))


@asynccontextmanager
async def _served(app: Starlette, port: int) -> AsyncIterator[None]:
    async with serve_uvicorn(app, "127.0.0.1", port):
        yield


async def test_a_text_mode_policy_left_waiting_for_its_next_message_is_stopped() -> None:
    """The green agent asked for an action and never came back with the result."""
    stopped = anyio.Event()

    async def policy(session: ToolSession, task: EpisodeView) -> str:
        try:
            await session.call("topology")
        finally:
            stopped.set()
        return "never reached"

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    card = agent_card("test-agent", "a test policy", url, [], streaming=False)
    executor = PurpleExecutor(lambda: policy, text_idle_s=1.0)
    app = Starlette(routes=a2a_routes(card, executor, CallerContextBuilder()))
    handoff = {"netdojo_episode": {"episode_id": "left-waiting", "mode": "text"}}
    message = new_message([new_text_part("a brief"), new_data_part(handoff)], role=Role.ROLE_USER)
    async with _served(app, port), httpx.AsyncClient(timeout=30) as http:
        config = ClientConfig(streaming=False, httpx_client=http)
        async with await create_client(url, client_config=config) as client:
            replies = [r async for r in client.send_message(SendMessageRequest(message=message))]
        assert "topology" in get_message_text(replies[-1].message)
        with anyio.fail_after(10):
            await stopped.wait()


async def test_a_purple_agent_cut_off_mid_episode_is_an_agent_error_and_stops_working() -> None:
    """The network drops mid-turn: that episode is the agent's error, the purple agent stops
    the policy working for nobody, and the next episode (a slow answer) is judged as usual."""
    turns: list[str] = []
    stopped = anyio.Event()
    cut_now = anyio.Event()

    async def policy(session: ToolSession, task: EpisodeView) -> str:
        turns.append(task.brief)
        if len(turns) == 1:
            cut_now.set()
            try:
                await anyio.sleep_forever()
            finally:
                stopped.set()
        await anyio.sleep(3)  # answers slowly, within its budget
        return await oracle(session, task)

    purple_port, proxy_port, green_port = free_port(), free_port(), free_port()
    url = f"http://127.0.0.1:{proxy_port}"
    config = {"families": ["static-routing"], "seeds": [1, 2], "calibration": True}
    request = {"participants": {"agent": url}, "config": config}
    async with (
        _served(green_app("127.0.0.1", green_port), green_port),
        _served(_purple_app(policy, url), purple_port),
        running(tcp_proxy(proxy_port, purple_port)) as proxy,
        anyio.create_task_group() as group,
    ):

        async def cut() -> None:
            await cut_now.wait()
            proxy.cut()

        group.start_soon(cut)
        artifacts = await assess(f"http://127.0.0.1:{green_port}", request)
        with anyio.fail_after(10):
            await stopped.wait()
        group.cancel_scope.cancel()
    episodes = artifacts["results"]["episodes"]
    assert [e["outcome"] for e in episodes] == ["agent_error", "solved"]
    assert episodes[1]["verdict"]["effort"]["wall_s"] >= 3
    assert _owned_by(os.getpid()) == []


async def test_an_engine_that_stops_answering_mid_episode_ends_it_as_infra_error(
    tmp_path: Path,
) -> None:
    """`netdojo run` reaches Docker through a socket that goes dark for a few seconds from the
    middle of the agent's turn: the episode is an infra_error, its lab is removed once the
    engine is back, and the rerun on a fresh lab is the recorded result."""
    socket = str(tmp_path / "docker.sock")
    proxy = docker_proxy(socket)
    seen: list[str] = []
    gone = anyio.Event()

    async def policy(session: ToolSession, task: EpisodeView) -> str:
        seen.append("turn")
        if len(seen) > 1:
            return "nothing this time"
        device = (await session.call("topology"))["devices"][0]["name"]
        proxy.down()
        gone.set()
        try:
            await session.call("show", {"device": device, "command": "ip route"})
        except ToolCallError as exc:
            seen.append(str(exc))
        return "the engine went away"

    async def back_after_a_while() -> None:
        await gone.wait()
        await anyio.sleep(OUTAGE_S)  # the judge and the teardown meet a silent engine
        await proxy.up()

    port = free_port()
    out = tmp_path / "run"
    argv = [NETDOJO, "run", "--agent", f"http://127.0.0.1:{port}", "--families",
            "static-routing", "--seeds", "1", "--out", str(out)]  # fmt: skip
    env = {**os.environ, "DOCKER_HOST": f"unix://{socket}"}
    log = tmp_path / "run.log"
    async with (
        running(proxy),
        _served(_purple_app(policy, f"http://127.0.0.1:{port}"), port),
        anyio.create_task_group() as group,
    ):
        group.start_soon(back_after_a_while)
        with log.open("wb") as output, anyio.fail_after(300):
            process = await anyio.open_process(argv, env=env, stdout=output, stderr=output)
            code = await process.wait()
    assert code == 0, log.read_text()[-3000:]
    assert any("Docker engine did not answer" in s for s in seen), seen
    (episode,) = json.loads((out / "results.json").read_text())["episodes"]
    assert episode["attempts"] == 2 and episode["outcome"] == "unsolved"
    assert "Docker engine did not answer" in episode["retried_because"]
    assert _owned_by(process.pid) == []
