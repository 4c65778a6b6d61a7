"""A family with a tool of its own takes its family declaration and its tool, nothing else: both
registered for the test, one episode on a live lab serves the tool over MCP and records its calls,
and a family without it does not serve it."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from pydantic import BaseModel

from netdojo.clients.session import ToolCallError, ToolSession
from netdojo.judges.runner import run_episode
from netdojo.reports.records import Budgets
from netdojo.scenarios import registry
from netdojo.scenarios.generate import generate
from netdojo.scenarios.model import STANDARD_TOOLS
from netdojo.tools.contract import EpisodeView
from netdojo.tools.lab_tools import LabTools
from netdojo.tools.registry import register_tool, unregister_tool
from netdojo.tools.spec import Device, ToolArguments, ToolSpec

from .arena import in_process

pytestmark = pytest.mark.anyio


class LinksArguments(ToolArguments):
    device: Device


class LinksResult(BaseModel):
    device: str
    text: str


async def _links(tools: LabTools, arguments: LinksArguments) -> LinksResult:
    async def run() -> LinksResult:
        device = tools.known_device(arguments.device)
        done = await tools.lab.exec(device, ["ip", "-br", "link"])
        return LinksResult(device=device, text=done.stdout)

    return await tools.recorded(LINKS, arguments, run)


LINKS: ToolSpec[LinksArguments, LinksResult] = ToolSpec(
    name="links",
    title="Link states",
    arguments=LinksArguments,
    result=LinksResult,
    description="The state of every link of a device, one line each.",
    run=_links,
    read_only=True,
    destructive=False,
)
FAMILY = dataclasses.replace(
    registry.family("ospf-adjacency"),
    name="test-links",
    tools=(*STANDARD_TOOLS, "links"),
    levels=(1,),
)


class Seen(BaseModel):
    listed: list[str] = []
    output: str = ""
    refused: str = ""


async def _episode(family: str, seen: Seen) -> Any:
    async def look(session: ToolSession, view: EpisodeView) -> str:
        seen.listed = [tool.name for tool in await session.list_tools()]
        router = next(d["name"] for d in (await session.call("topology"))["devices"])
        try:
            seen.output = (await session.call("links", {"device": router}))["text"]
        except ToolCallError as exc:
            seen.refused = str(exc)
        return "looked at the links"

    scenario = generate(family, 1, 3)
    return await run_episode(scenario, in_process(look), Budgets(), "test-links-episode")


async def test_a_family_serves_its_own_tool_and_records_its_calls() -> None:
    register_tool(LINKS)
    try:
        with registry.registered(FAMILY):
            seen = Seen()
            record = await _episode("test-links", seen)
    finally:
        unregister_tool("links")
    assert seen.listed == [*STANDARD_TOOLS, "links"]
    assert "lo" in seen.output and "eth0" in seen.output
    assert record.trajectory is not None
    steps = [step for step in record.trajectory.steps if step.tool == "links"]
    assert len(steps) == 1 and steps[0].ok and steps[0].result is not None
    assert steps[0].arguments == {"device": steps[0].result["device"]}
    assert record.outcome == "unsolved" and record.verdict.effort.state_changing_calls == 0


async def test_a_family_without_the_tool_does_not_serve_it() -> None:
    register_tool(LINKS)
    try:
        seen = Seen()
        record = await _episode("ospf-adjacency", seen)
    finally:
        unregister_tool("links")
    assert seen.listed == list(STANDARD_TOOLS)
    assert "links" in seen.refused and not seen.output
    assert record.outcome == "unsolved"
