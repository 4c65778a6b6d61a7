"""MCP over real transports: HTTP endpoints with per-episode tokens, and `netdojo mcp` itself."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from netdojo.judges.episode import Episode, open_episode
from netdojo.scenarios.generate import generate
from netdojo.servers.endpoints import EndpointHost
from netdojo.servers.mcp_server import evaluation_server
from netdojo.servers.serving import free_port, serve_uvicorn
from netdojo.tools.lab_tools import LabTools
from netdojo.tools.trajectory import Trajectory

from .leftovers import our_labs, still_there

pytestmark = pytest.mark.anyio
NETDOJO = str(Path(sys.executable).parent / "netdojo")
RPC = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
async def episode() -> AsyncIterator[Episode]:
    opened = await open_episode(generate("static-routing", 1, 2), "test-transports")
    try:
        yield opened
    finally:
        await opened.close()


async def _labs_gone(names: set[str], deadline_s: float = 60) -> set[str]:
    """Those of ``names`` that still exist once ``deadline_s`` has passed."""
    with anyio.move_on_after(deadline_s):
        while still_there(names):
            await anyio.sleep(0.5)
    return still_there(names)


async def test_http_endpoints_answer_only_their_own_token(episode: Episode) -> None:
    port = free_port()
    host = EndpointHost("127.0.0.1", port)
    first, second = (
        LabTools(episode.lab, episode.scenario.public, Trajectory(episode=name))
        for name in ("first", "second")
    )
    async with serve_uvicorn(host.app, "127.0.0.1", port):
        a = await host.add("first", evaluation_server(first))
        b = await host.add("second", evaluation_server(second))
        assert a.token != b.token and a.url.startswith(f"http://127.0.0.1:{port}/episodes/")
        auth = {"Authorization": f"Bearer {a.token}"}
        async with (
            httpx2.AsyncClient(headers=auth) as http,
            Client(streamable_http_client(a.url, http_client=http)) as client,
        ):
            result = await client.call_tool("topology", {})
            assert not result.is_error
        async with httpx2.AsyncClient() as http:
            for headers, says in (
                ({}, "no bearer token"),
                ({"Authorization": "Bearer wrong"}, "wrong bearer token"),
                ({"Authorization": "Basic x"}, "holds no bearer token"),
            ):
                refused = await http.post(a.url, json=RPC, headers={**MCP_HEADERS, **headers})
                assert refused.status_code == 401, headers
                assert refused.headers["www-authenticate"].startswith("Bearer")
                assert "resource_metadata" not in refused.headers["www-authenticate"]
                assert says in refused.json()["error"], refused.text
            other = {**MCP_HEADERS, "Authorization": f"Bearer {b.token}"}
            refused = await http.post(a.url, json=RPC, headers=other)
            assert refused.status_code == 401 and "wrong bearer token" in refused.text
            foreign = {**MCP_HEADERS, **auth, "Host": "attacker.example"}
            assert (await http.post(a.url, json=RPC, headers=foreign)).status_code == 421
            host.remove("first")
            gone = await http.post(a.url, json=RPC, headers={**MCP_HEADERS, **auth})
            assert gone.status_code == 404
    assert [step.tool for step in first.trajectory.steps] == ["topology"]
    assert second.trajectory.steps == [], "each endpoint records its own trajectory"


async def test_stdio_practice_session_removes_its_lab_when_the_client_leaves() -> None:
    before = our_labs()
    params = StdioServerParameters(command=NETDOJO, args=["mcp"], env=dict(os.environ))
    async with Client(params) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert {"list_families", "start_scenario", "brief", "reset", "grade", "end"} <= tools
        assert "submit" not in tools
        early = await client.call_tool("show", {"device": "r1", "command": "show version"})
        assert early.is_error and "start_scenario" in early.content[0].text
        listed = await client.call_tool("list_families", {})
        assert len(listed.content) == 1, "one structured result, not a block per family"
        families = listed.structured_content["families"]
        assert {f["name"] for f in families} >= {"static-routing", "ospf-build"}
        started = await client.call_tool(
            "start_scenario", {"family": "static-routing", "level": 1, "seed": 5}
        )
        assert not started.is_error, started.content
        assert started.structured_content["brief"] and started.structured_content["seed"] == 5
        mine = our_labs() - before
        assert len(mine) == 1
        view = (await client.read_resource("netdojo://topology")).contents[0].text
        assert view.startswith("```mermaid\nflowchart LR")
    assert not await _labs_gone(mine), "the lab goes when the client does"


async def test_http_evaluation_serves_one_episode_and_cleans_up_on_sigterm(
    tmp_path: Path,
) -> None:
    before = our_labs()
    port, token = free_port(), "test-token-0123456789"
    trajectory = tmp_path / "trajectory.json"
    token_file = tmp_path / "token"
    token_file.write_text(f"{token}\n")
    server = subprocess.Popen(
        [NETDOJO, "mcp", "--family", "host-config", "--level", "1", "--seed", "4", "--http",
         "--port", str(port), "--token-file", str(token_file), "--trajectory", str(trajectory)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stderr is not None
        url = ""
        with anyio.fail_after(120):
            while not url:
                line = await anyio.to_thread.run_sync(server.stderr.readline)
                assert line, "the server exited before serving"
                url = line.split("MCP endpoint: ")[1].strip() if "MCP endpoint: " in line else ""
        mine = our_labs() - before
        assert len(mine) == 1
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert "submit" in names and not names & {"grade", "start_scenario", "reset"}
            hosts = [
                d["name"]
                for d in (await client.call_tool("topology", {})).structured_content["devices"]
                if d["role"] == "host"
            ]
            await client.call_tool("ping", {"source": hosts[0], "destination": hosts[-1]})
            assert not (await client.call_tool("submit", {"summary": "looked"})).is_error
    finally:
        server.send_signal(signal.SIGTERM)
        await anyio.to_thread.run_sync(server.wait, 60)
    said = server.stderr.read() if server.stderr else ""
    assert server.returncode == 0, said
    assert token not in said and "Traceback" not in said and "CancelledError" not in said, said
    recorded = json.loads(trajectory.read_text())
    assert [s["tool"] for s in recorded["steps"]] == ["topology", "ping", "submit"]
    assert recorded["submitted"] == "looked" and token not in trajectory.read_text()
    assert not await _labs_gone(mine)
