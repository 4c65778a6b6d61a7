"""Assessments on live labs driven as AgentBeats' 0.3 stack drives them: an A2A 0.3 client
(`tests/a2a_v0_3/client.py`, the 0.3 SDK in its own environment) streams an assessment from the
green agent, posting to its base URL with httpx's default 5 s read timeout as the gateway's
client does, against a built-in purple agent (A2A 1.0, MCP mode) and against an A2A 0.3 purple
agent built as the agent template builds one (text mode)."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from netdojo.servers.apps import green_app
from netdojo.servers.serving import free_port, serve_uvicorn
from tests.a2a_v0_3 import peers

from .arena import builtin_purple

pytestmark = pytest.mark.anyio
ONE = {"families": ["ospf-adjacency"], "levels": [1], "seeds": [1]}
SILENCE_S = 5.0  # httpx's default read timeout: the client would have given up past it


@asynccontextmanager
async def _green() -> AsyncIterator[str]:
    port = free_port()
    async with serve_uvicorn(green_app("127.0.0.1", port), "127.0.0.1", port):
        yield f"http://127.0.0.1:{port}"


@asynccontextmanager
async def _noop() -> AsyncIterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    async with serve_uvicorn(builtin_purple("noop", url), "127.0.0.1", port):
        yield url


async def _assess_as_the_gateway(green: str, purple: str, **config: Any) -> list[dict[str, Any]]:
    """The events of one assessment streamed by the 0.3 client, checked as the gateway reads
    them: it ended completed, never went quiet for long, and its artifacts hold data parts."""
    request = json.dumps({"participants": {"agent": purple}, "config": config})
    code, events = await peers.client(
        "send", green, "--text", request, "--streaming", "--to-base-url", timeout_s=540
    )
    assert code == 0, events[-1]
    final = events[-1]["body"]
    assert events[-1]["event"] == "status-update" and final["final"] is True
    assert final["status"]["state"] == "completed", final["status"]
    gaps = [later["at"] - earlier["at"] for earlier, later in itertools.pairwise(events)]
    assert max(gaps) < SILENCE_S, gaps
    beats = [_metadata(e).get("progress") for e in events]
    assert any(b and b["running"] == 1 for b in beats), "progress while the episode ran"
    return events


def _metadata(event: dict[str, Any]) -> dict[str, Any]:
    return dict(event["body"].get("metadata") or {}) if event["event"] == "status-update" else {}


def _artifacts(events: list[dict[str, Any]]) -> dict[str, Any]:
    found = {}
    for event in events:
        if event["event"] == "artifact-update":
            artifact = event["body"]["artifact"]
            [part] = artifact["parts"]
            assert part["kind"] == "data"
            found[artifact["name"]] = part["data"]
    return found


async def test_a_0_3_client_assesses_a_builtin_purple_agent_as_the_gateway_does() -> None:
    async with _green() as green, _noop() as purple:
        events = await _assess_as_the_gateway(green, purple, **ONE)
    episodes = [_metadata(e)["episode"] for e in events if "episode" in _metadata(e)]
    assert [e["outcome"] for e in episodes] == ["unsolved"]
    artifacts = _artifacts(events)
    assert [e["outcome"] for e in artifacts["results"]["episodes"]] == ["unsolved"]
    assert artifacts["results"]["summary"]["solved"]["value"] == 0.0
    [kept] = artifacts["trajectories"]["trajectories"]
    assert [s["tool"] for s in kept["trajectory"]["steps"]] == ["submit"]


async def test_a_0_3_client_assesses_a_0_3_purple_agent_in_text_mode() -> None:
    async with _green() as green, peers.agent("--reply", "task") as purple:
        events = await _assess_as_the_gateway(green, purple, mode="text", **ONE)
    first = events[1]["body"]["status"]["message"]["parts"][0]["text"]
    assert first.endswith("(A2A 0.3)"), first
    artifacts = _artifacts(events)
    [episode] = artifacts["results"]["episodes"]
    assert episode["outcome"] == "unsolved", episode.get("error")
    [kept] = artifacts["trajectories"]["trajectories"]
    steps = kept["trajectory"]["steps"]
    assert [(s["tool"], s["ok"]) for s in steps] == [("topology", True), ("submit", True)]
    assert kept["trajectory"]["submitted"].startswith("saw ")
